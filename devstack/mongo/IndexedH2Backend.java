import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
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

  private IndexedH2Backend(MVStore mvStore) {
    super(mvStore);
  }

  public static IndexedH2Backend open(String fileName) {
    store = MVStore.open(fileName);
    return new IndexedH2Backend(store);
  }

  @Override
  protected MongoDatabase openOrCreateDatabase(String databaseName) {
    return new Database(databaseName, store, getCursorRegistry());
  }

  static final class Database extends H2Database {
    Database(String databaseName, MVStore mvStore, CursorRegistry cursorRegistry) {
      super(databaseName, mvStore, cursorRegistry);
    }

    /** Every index but `_id`'s is an OrderedIndex (unique ones enforce uniqueness themselves, in memory). */
    @Override
    protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
        boolean sparse) {
      if (isPrimaryKeyIndex(keys)) return super.openOrCreateUniqueIndex(collectionName, indexName, keys, sparse);
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

    @Override
    protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
      String fullName = getFullCollectionNamespace(collectionName);
      MVMap<Object, Document> dataMap = store.openMap("databases." + fullName);
      MVMap<String, Object> metaMap = store.openMap("meta." + fullName);
      IndexedCollection collection = new IndexedCollection(this, collectionName, options, dataMap, metaMap, cursorRegistry);
      // `_id` ranges (a run's events) need `_id` in order; the library's own `_id` index answers equality only.
      if (collection.idField() != null) {
        collection.addIndex(new OrderedIndex("_id_ordered", List.of(new IndexKey("_id", true)), false, false, "_id"));
      }
      return collection;
    }
  }

  static final class IndexedCollection extends H2Collection {
    IndexedCollection(MongoDatabase database, String collectionName, CollectionOptions options,
        MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
      super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    String idField() {
      return getIdField();
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
        OrderedIndex.Plan best = null;
        for (Index<Object> index : getIndexes()) {
          if (!(index instanceof OrderedIndex ordered)) continue;
          OrderedIndex.Plan plan = ordered.plan(query, orderBy);
          if (plan != null && (best == null || OrderedIndex.Plan.BETTER.compare(plan, best) > 0)) best = plan;
        }
        if (best != null) {
          Stream<Document> docs = best.index().positions(best).map(this::getDocument).filter(Objects::nonNull);
          return matchDocumentsFromStream(query, docs, numberToSkip, limit, batchSize,
              best.sorted() ? null : deriveComparator(orderBy), fieldSelector);
        }
      }
      return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
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
