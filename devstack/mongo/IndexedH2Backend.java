import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.oplog.Oplog;
import io.netty.channel.Channel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * mongo-java-server's H2 backend with queries planned on indexes as mongod plans them (see OrderedIndex): a query
 * pinning `_id` reads that document; otherwise the index that serves the sort and pins the most fields narrows the
 * documents, and a sort it serves stops the walk at the limit.
 */
public class IndexedH2Backend extends H2Backend {
  /**
   * The store, for databases opened while H2Backend's constructor runs (before this class's fields are set); one
   * backend per process.
   */
  private static MVStore store;

  /**
   * The store's page cache. H2's default (16 MB) holds a few thousand runs: with 100 000 stored, a run search read
   * most of its page from disk (B11); the launcher's heap (-Xmx2g, devstack/servers.ts) has room for this.
   */
  private static final int CACHE_MB = 256;

  private IndexedH2Backend(MVStore mvStore) {
    super(mvStore);
  }

  public static IndexedH2Backend open(String fileName) {
    store = new MVStore.Builder().fileName(fileName).cacheSize(CACHE_MB).autoCompactFillRate(0).open();
    return new IndexedH2Backend(store);
  }

  /**
   * The file is compacted when the server stops, not while it serves. H2 compacts in the background whenever no write
   * is under way: after a bulk load it rewrote chunks exactly while only reads came in, took about a third of the
   * server's CPU and most of its garbage collection (B11's large phase: 0.6-1.0 s of collector pauses in 10 s, against
   * 0.03-0.09 s without). Chunks left wholly unused are still reused while it runs.
   */
  private static final int COMPACT_ON_CLOSE_MS = 1_000;

  @Override
  public void close() {
    try {
      if (!store.isClosed()) store.compactFile(COMPACT_ON_CLOSE_MS);
    } catch (RuntimeException e) {
      // The data is whole without it: the close below still writes out what is unsaved.
      System.err.println("compacting on close failed: " + e);
    } finally {
      super.close();
    }
  }

  @Override
  protected MongoDatabase openOrCreateDatabase(String databaseName) {
    return new Database(databaseName, store, getCursorRegistry());
  }

  static final class Database extends H2Database {
    Database(String databaseName, MVStore mvStore, CursorRegistry cursorRegistry) {
      super(databaseName, mvStore, cursorRegistry);
    }

    /**
     * Every index is an OrderedIndex, `_id`'s included (unique ones enforce uniqueness themselves, in memory). The
     * library's own unique index is an H2 map keyed by KeyValue, a type H2 compares by Java-serialising both sides: each
     * insert's duplicate check and each update's position lookup serialised a dozen keys, a fifth of the server's CPU in
     * a map of HTTP calls (B10). A file written before keeps that map; it is dropped, as nothing reads it any more.
     */
    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
        boolean sparse) {
      if (isPrimaryKeyIndex(keys)) {
        String h2Map = getFullCollectionNamespace(collectionName) + "._index_" + indexName;
        if (store.hasMap(h2Map)) store.removeMap(h2Map);
      }
      return new OrderedIndex(indexName, keys, sparse, true, "_id");
    }

    @Override
    protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys,
        boolean sparse) {
      return new OrderedIndex(indexName, keys, sparse, false, "_id");
    }

    private static boolean isPrimaryKeyIndex(List<IndexKey> keys) {
      return keys.size() == 1 && keys.get(0).getKey().equals("_id");
    }

    /**
     * An aggregation that starts with `$match` reads the documents that match through the query planner, as mongod's
     * pipeline does; the library's own aggregation reads the whole collection first. (A map's status counts its
     * executions by status this way: every read scanned every execution of every run.) The pipeline then runs whole,
     * its `$match` included, on what the planner found.
     */
    @Override
    public Document handleCommand(Channel channel, String command, Document query, DatabaseResolver databaseResolver,
        Oplog oplog) {
      if (command.equalsIgnoreCase("aggregate") && query.get(command) instanceof String collectionName) {
        MongoCollection<Object> collection = resolveCollection(collectionName, false);
        List<Document> pipeline = Aggregation.parse(query.get("pipeline"));
        if (collection instanceof IndexedCollection && !pipeline.isEmpty() && pipeline.get(0).size() == 1
            && pipeline.get(0).get("$match") instanceof Document match) {
          clearLastStatus(channel);
          Aggregation aggregation = Aggregation.fromPipeline(pipeline, databaseResolver, this, collection, oplog);
          aggregation.validate(query);
          List<Document> result = aggregation.runStages(collection.handleQueryAsStream(match));
          // The library's own answer: every result in the first batch, no cursor left open.
          Document cursor = new Document("id", 0L).append("ns", getFullCollectionNamespace(collectionName));
          Document response = new Document("cursor", cursor.append("firstBatch", result));
          Utils.markOkay(response);
          return response;
        }
      }
      return super.handleCommand(channel, command, query, databaseResolver, oplog);
    }

    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
      String fullName = getFullCollectionNamespace(collectionName);
      MVMap<Object, Document> dataMap = store.openMap("databases." + fullName);
      MVMap<String, Object> metaMap = store.openMap("meta." + fullName);
      return new IndexedCollection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
    }
  }

  /**
   * STEPWISE_MONGO_SCAN_LOG=<file> appends every filtered query that no index narrows to that file (what mongod's
   * notablescan would refuse), to find the queries that still read a whole collection.
   */
  static final String SCAN_LOG = System.getenv("STEPWISE_MONGO_SCAN_LOG");

  static synchronized void logScan(String line) {
    try {
      Files.writeString(Path.of(SCAN_LOG), line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      System.err.println("scan log: " + e);
    }
  }

  static final class IndexedCollection extends H2Collection {
    private static final ValueComparator VALUES = ValueComparator.asc();

    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
        MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
      super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    /**
     * The data size (collStats' `size`) is not kept: the library BSON-encodes the whole document before and after
     * every write to track it, and nothing here reads it.
     */
    @Override
    protected boolean tracksDataSize() {
      return false;
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit,
        int batchSize, Document fieldSelector) {
      boolean natural = orderBy != null && orderBy.containsKey("$natural");
      if (!natural && getIdField() != null) {
        List<Object> ids = pinnedIds(query.get(getIdField()));
        if (ids != null) {
          Stream<Document> docs = ids.stream().map(this::getDocument).filter(Objects::nonNull);
          return matchDocumentsFromStream(query, docs, numberToSkip, limit, batchSize, deriveComparator(orderBy),
              fieldSelector);
        }
        Document conditions = conditions(query);
        List<OrderedIndex.Plan> plans = new ArrayList<>();
        for (Index<Object> index : getIndexes()) {
          if (!(index instanceof OrderedIndex ordered)) continue;
          OrderedIndex.Plan plan = ordered.plan(conditions, orderBy);
          if (plan != null) plans.add(plan);
        }
        OrderedIndex.Plan best = choose(plans);
        if (best != null) {
          Stream<Document> docs = best.index().positions(best).map(this::getDocument).filter(Objects::nonNull);
          return matchDocumentsFromStream(query, docs, numberToSkip, limit, batchSize,
              best.sorted() ? null : deriveComparator(orderBy), fieldSelector);
        }
      }
      if (SCAN_LOG != null && !query.isEmpty() && count() > 0) {
        logScan(getFullName() + " " + query.keySet() + " sort " + orderBy);
      }
      return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
    }

    /**
     * Projections of top-level fields only (`{snapshot: 0}`, `{_id: 1}`) without the library's deep copy, which cloned
     * every matched document whole (a run's snapshot included) before dropping the excluded fields: most of a status
     * read's and a run list's time in the server. The copy is shallow, as an unprojected result already is (a result
     * is the store's own document, and nothing mutates it), with the document's field order, as mongod's. Any other
     * projection (a path, an operator) is the library's.
     */
    @Override
    protected QueryResult matchDocumentsFromStream(Document query, Stream<Document> documentStream, int numberToSkip,
        int limit, int batchSize, Comparator<Document> documentComparator, Document fieldSelector) {
      UnaryOperator<Document> projection = topLevelProjection(fieldSelector, getIdField());
      if (projection == null) {
        return super.matchDocumentsFromStream(query, documentStream, numberToSkip, limit, batchSize,
            documentComparator, fieldSelector);
      }
      Stream<Document> docs = documentStream.filter(document -> documentMatchesQuery(document, query));
      if (documentComparator != null) docs = docs.sorted(documentComparator);
      if (numberToSkip > 0) docs = docs.skip(numberToSkip);
      if (limit > 0) docs = docs.limit(limit);
      return createQueryResult(docs.map(projection).collect(Collectors.toList()), batchSize);
    }

    /** The projection of top-level fields set to 0/1/true/false, or null for the library to apply (or no projection). */
    static UnaryOperator<Document> topLevelProjection(Document fields, String idField) {
      if (fields == null || fields.isEmpty()) return null;
      Boolean showId = null;
      Set<String> included = new HashSet<>();
      Set<String> excluded = new HashSet<>();
      for (Map.Entry<String, Object> e : fields.entrySet()) {
        String key = e.getKey();
        if (key.isEmpty() || key.startsWith("$") || key.contains(".")) return null;
        if (!(e.getValue() instanceof Boolean || e.getValue() instanceof Number)) return null;
        boolean on = Utils.isTrue(e.getValue());
        if (key.equals(idField)) showId = on;
        else (on ? included : excluded).add(key);
      }
      if (!included.isEmpty() && !excluded.isEmpty()) return null; // the library refuses it, as mongod does
      boolean withId = showId == null || showId;
      boolean inclusion = !included.isEmpty() || Boolean.TRUE.equals(showId);
      return document -> {
        Document out = new Document();
        for (Map.Entry<String, Object> e : document.entrySet()) {
          String key = e.getKey();
          boolean keep = key.equals(idField) ? withId : inclusion ? included.contains(key) : !excluded.contains(key);
          if (keep) out.put(key, e.getValue());
        }
        return out;
      };
    }

    /** Entries a plan's ranges are counted up to when plans compete (a walk of the index only, no documents). */
    private static final long ESTIMATE_CAP = 100;
    /** A plan this close to the narrowest (in entries) still counts as narrow: its other merits decide. */
    private static final long NARROW_SLACK = 16;

    /**
     * The plan to use: among those whose ranges hold about as few entries as the narrowest (counted up to a cap), the
     * best by Plan.BETTER (serves the sort, pins more fields, ...). mongod races its candidate plans for the same
     * reason: a sorted walk of a workflow's 90 000 runs must not win over the three in-flight statuses that hold none.
     */
    static OrderedIndex.Plan choose(List<OrderedIndex.Plan> all) {
      OrderedIndex.Plan first = null;
      for (OrderedIndex.Plan plan : all) {
        if (first == null || OrderedIndex.Plan.BETTER.compare(plan, first) > 0) first = plan;
      }
      // Counting costs a walk of the ranges: only when another plan pins as many fields is the choice in doubt.
      List<OrderedIndex.Plan> plans = new ArrayList<>();
      for (OrderedIndex.Plan plan : all) if (plan.pinned() >= (first == null ? 0 : first.pinned())) plans.add(plan);
      if (plans.size() <= 1) return first;
      long[] sizes = new long[plans.size()];
      long narrowest = Long.MAX_VALUE;
      for (int i = 0; i < sizes.length; i++) {
        OrderedIndex.Plan plan = plans.get(i);
        sizes[i] = plan.index().countUpTo(plan, ESTIMATE_CAP);
        narrowest = Math.min(narrowest, sizes[i]);
      }
      long bound = Math.max(narrowest * 4, NARROW_SLACK);
      OrderedIndex.Plan best = null;
      for (int i = 0; i < sizes.length; i++) {
        OrderedIndex.Plan plan = plans.get(i);
        if (sizes[i] > bound) continue;
        if (best == null || OrderedIndex.Plan.BETTER.compare(plan, best) > 0) best = plan;
      }
      return best;
    }

    /**
     * The field conditions a plan may narrow by: the query's own, those of its top-level `$and` (keyset paging wraps
     * the filter in one), and for a top-level `$or` whose every branch bounds the same field (the paging cursor's
     * `a < x or (a = x and _id < y)`), the range that covers all branches. Each is implied by the query, so documents
     * found by them are a superset of the matches.
     */
    static Document conditions(Document query) {
      Document out = new Document();
      collect(query, out);
      return out;
    }

    private static void collect(Document query, Document out) {
      for (Map.Entry<String, Object> e : query.entrySet()) {
        String key = e.getKey();
        if (key.equals("$and") && e.getValue() instanceof List<?> parts) {
          for (Object part : parts) if (part instanceof Document d) collect(d, out);
        } else if (key.equals("$or") && e.getValue() instanceof List<?> branches) {
          coveringRanges(branches, out);
        } else if (!key.startsWith("$") && !out.containsKey(key)) {
          out.put(key, e.getValue());
        }
      }
    }

    private static void coveringRanges(List<?> branches, Document out) {
      if (branches.isEmpty() || !(branches.get(0) instanceof Document first)) return;
      for (String field : first.keySet()) {
        if (field.startsWith("$") || out.containsKey(field)) continue;
        Object low = null;
        Object high = null;
        boolean unboundedLow = false;
        boolean unboundedHigh = false;
        for (Object branch : branches) {
          Object[] range = branch instanceof Document d ? range(d.get(field)) : null;
          if (range == null) {
            low = null;
            high = null;
            unboundedLow = unboundedHigh = true;
            break;
          }
          if (range[0] == null) unboundedLow = true;
          else if (low == null || VALUES.compare(range[0], low) < 0) low = range[0];
          if (range[1] == null) unboundedHigh = true;
          else if (high == null || VALUES.compare(range[1], high) > 0) high = range[1];
        }
        Document bound = new Document();
        if (!unboundedLow && low != null) bound.put("$gte", low);
        if (!unboundedHigh && high != null) bound.put("$lte", high);
        if (!bound.isEmpty()) out.put(field, bound);
      }
    }

    /** [low, high] (inclusive, null for unbounded) of a scalar equality or a `$gt` to `$lte` condition, else null. */
    private static Object[] range(Object condition) {
      if (condition == null || condition instanceof List<?>) return null;
      if (!(condition instanceof Document d)) return new Object[] {condition, condition};
      Object[] range = new Object[2];
      for (Map.Entry<String, Object> e : d.entrySet()) {
        switch (e.getKey()) {
          case "$gt", "$gte" -> range[0] = e.getValue();
          case "$lt", "$lte" -> range[1] = e.getValue();
          default -> {
            return null;
          }
        }
      }
      return range;
    }

    /**
     * The `_id` values a query pins `_id` to (equality or `$in`), or null. A document's position is its raw `_id`, so
     * only ids that equal nothing of another type qualify (strings and ObjectIds; a number 1 also matches 1.0).
     */
    private static List<Object> pinnedIds(Object condition) {
      if (isPlainId(condition)) return List.of(condition);
      if (!(condition instanceof Document doc) || doc.size() != 1 || !(doc.get("$in") instanceof Collection<?> in)) {
        return null;
      }
      List<Object> ids = new ArrayList<>();
      for (Object v : in) {
        if (!isPlainId(v)) return null;
        if (!ids.contains(v)) ids.add(v);
      }
      return ids;
    }

    private static boolean isPlainId(Object value) {
      return value instanceof String || value instanceof ObjectId;
    }
  }
}
