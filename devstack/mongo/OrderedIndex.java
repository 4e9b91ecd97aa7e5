import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.DuplicateKeyError;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;

/**
 * A secondary index the embedded server can answer queries from, as mongod does: entries ordered by the index's key
 * values (then `_id`, so entries of a non-unique index are distinct), held in memory and rebuilt from the documents
 * when the database opens. mongo-java-server keeps only unique indexes and uses one only when a query names exactly
 * its fields, so every other query (an owner's runs, a run by `_id` and owner, a run's events by `_id` range) scanned
 * the whole collection: costs that grew with the stored data and that a real mongod does not have.
 *
 * <p>The index only narrows: IndexedH2Backend re-applies the whole query to every document it yields, so a plan may
 * return more documents than match, never fewer. Entries are kept in ascending order on every field whatever the
 * declared direction; a sort is served by walking the range forwards or backwards.
 */
public class OrderedIndex extends Index<Object> {
  /** Entries of one equality prefix: beyond this many `$in` combinations a plan stops narrowing at that field. */
  static final int MAX_COMBINATIONS = 64;

  private final boolean unique;
  private final String idField;
  /** The fields an entry orders by: the index's, then `_id` for a non-unique index. */
  private final List<String> fields;
  private final ConcurrentSkipListMap<Key, Object> entries = new ConcurrentSkipListMap<>();
  /** A document had an array in an indexed field: its entries then do not say where its values sort; not used. */
  private volatile boolean multikey;

  public OrderedIndex(String name, List<IndexKey> keys, boolean sparse, boolean unique, String idField) {
    super(name, keys, sparse);
    this.unique = unique;
    this.idField = idField;
    List<String> f = new ArrayList<>();
    for (IndexKey k : keys) f.add(k.getKey());
    if (!unique) f.add(idField);
    this.fields = List.copyOf(f);
  }

  // ---- maintenance (called by the collection under its lock) ----

  private Object positionOf(Document document) {
    // H2Collection's position is the raw `_id` value.
    return Utils.getSubdocumentValue(document, idField);
  }

  private boolean sparseAndAbsent(Document document) {
    if (!isSparse()) return false;
    for (String key : keys()) {
      if (!(Utils.getSubdocumentValueCollectionAware(document, key) instanceof Missing)) return false;
    }
    return true;
  }

  private List<Key> keysOf(Document document) {
    List<Key> out = new ArrayList<>();
    for (String key : keys()) {
      if (Utils.getSubdocumentValueCollectionAware(document, key) instanceof Collection) multikey = true;
    }
    Object id = normalize(positionOf(document));
    for (KeyValue kv : getKeyValues(document)) {
      List<Object> values = new ArrayList<>(fields.size());
      for (Object v : kv) values.add(normalize(v));
      if (!unique) values.add(id);
      out.add(new Key(values.toArray(), 0));
    }
    return out;
  }

  @Override
  public Object getPosition(Document document) {
    if (sparseAndAbsent(document)) return null;
    for (Key key : keysOf(document)) {
      Object position = entries.get(key);
      if (position != null) return position;
    }
    return null;
  }

  @Override
  public void checkAdd(Document document, MongoCollection<Object> collection) {
    if (!unique || sparseAndAbsent(document)) return;
    for (Key key : keysOf(document)) {
      if (entries.containsKey(key)) throw duplicate(collection, key);
    }
  }

  @Override
  public void add(Document document, Object position, MongoCollection<Object> collection) {
    checkAdd(document, collection);
    if (sparseAndAbsent(document)) return;
    for (Key key : keysOf(document)) entries.put(key, position);
  }

  @Override
  public Object remove(Document document) {
    if (sparseAndAbsent(document)) return null;
    Object removed = null;
    for (Key key : keysOf(document)) {
      Object position = entries.remove(key);
      if (position != null) removed = position;
    }
    return removed;
  }

  @Override
  public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Object> collection) {
    if (!unique || sparseAndAbsent(newDocument) || nullAwareEqualsKeys(oldDocument, newDocument)) return;
    Object own = positionOf(oldDocument);
    for (Key key : keysOf(newDocument)) {
      Object position = entries.get(key);
      if (position != null && !position.equals(own)) throw duplicate(collection, key);
    }
  }

  @Override
  public void updateInPlace(Document oldDocument, Document newDocument, Object position,
      MongoCollection<Object> collection) {
    if (nullAwareEqualsKeys(oldDocument, newDocument)) return;
    remove(oldDocument);
    if (!sparseAndAbsent(newDocument)) {
      for (Key key : keysOf(newDocument)) entries.put(key, position);
    }
  }

  private DuplicateKeyError duplicate(MongoCollection<Object> collection, Key key) {
    return new DuplicateKeyError(this, collection, getKeys(), new KeyValue(List.of(key.values)));
  }

  @Override
  public boolean isUnique() {
    return unique;
  }

  @Override
  public long getCount() {
    return entries.size();
  }

  @Override
  public long getDataSize() {
    return 0;
  }

  @Override
  public void drop() {
    entries.clear();
  }

  /** The collection plans with {@link #plan}; the library's own planner must not pick this index. */
  @Override
  public boolean canHandle(Document query) {
    return false;
  }

  @Override
  public Iterable<Object> getPositions(Document query) {
    throw new UnsupportedOperationException("OrderedIndex is planned by IndexedH2Backend");
  }

  // ---- planning ----

  /**
   * How this index can narrow `query` and whether walking it yields `orderBy`'s order; null when it cannot narrow.
   * The plan fixes the leading fields the query pins to values (equality or `$in`), then takes a range (`$gt`, `$gte`,
   * `$lt`, `$lte`) of the next field when the query gives one.
   */
  Plan plan(Document query, Document orderBy) {
    if (multikey) return null;
    List<List<Object>> prefixes = new ArrayList<>();
    prefixes.add(new ArrayList<>());
    int pinned = 0;
    for (String field : fields) {
      List<Object> values = pinnedValues(query.get(field), field, query);
      if (values == null || prefixes.size() * values.size() > MAX_COMBINATIONS) break;
      List<List<Object>> next = new ArrayList<>();
      for (List<Object> prefix : prefixes) {
        for (Object v : values) {
          List<Object> p = new ArrayList<>(prefix);
          p.add(v);
          next.add(p);
        }
      }
      prefixes = next;
      pinned++;
    }
    Object lower = null;
    Object upper = null;
    boolean lowerInclusive = true;
    boolean upperInclusive = true;
    if (pinned < fields.size() && query.get(fields.get(pinned)) instanceof Document) {
      Document condition = (Document) query.get(fields.get(pinned));
      for (Map.Entry<String, Object> e : condition.entrySet()) {
        if (!isScalar(e.getValue())) continue;
        Object v = normalize(e.getValue());
        switch (e.getKey()) {
          case "$gt" -> { lower = v; lowerInclusive = false; }
          case "$gte" -> { lower = v; lowerInclusive = true; }
          case "$lt" -> { upper = v; upperInclusive = false; }
          case "$lte" -> { upper = v; upperInclusive = true; }
          default -> { }
        }
      }
    }
    boolean ranged = lower != null || upper != null;
    // A sparse index lacks the documents without its fields: a query pinning its first field to a value (never null,
    // see isPinnable) or bounding it by one cannot match those (a range matches values of its bound's type only, as in
    // mongod: `{at: {$lte: <date>}}` never matches a document without `at`).
    if (pinned == 0 && !ranged) return null;
    int sort = sortDirection(orderBy, pinned, prefixes.size());
    return new Plan(this, prefixes, pinned, lower, lowerInclusive, upper, upperInclusive, sort);
  }

  /** Values a query field pins (equality or `$in` of pinnable values), or null when it does not pin it to values. */
  private List<Object> pinnedValues(Object condition, String field, Document query) {
    if (!query.containsKey(field)) return null;
    if (isPinnable(condition)) return Collections.singletonList(normalize(condition));
    if (condition instanceof Document doc && doc.size() == 1) {
      if (doc.containsKey("$eq") && isPinnable(doc.get("$eq"))) {
        return Collections.singletonList(normalize(doc.get("$eq")));
      }
      if (doc.get("$in") instanceof Collection<?> in && !in.isEmpty()) {
        List<Object> values = new ArrayList<>();
        for (Object v : in) {
          if (!isPinnable(v)) return null;
          Object n = normalize(v);
          if (!values.contains(n)) values.add(n);
        }
        values.sort(ValueComparator.asc());
        return values;
      }
    }
    return null;
  }

  /**
   * +1 or -1 when walking the plan's range forwards or backwards yields the order asked for, 0 when no order is asked,
   * 2 when the documents must be sorted after all. A walk serves a sort on the fields right after the pinned ones, all
   * in one direction, over a single pinned prefix.
   */
  private int sortDirection(Document orderBy, int pinned, int prefixCount) {
    if (orderBy == null || orderBy.isEmpty()) return 0;
    if (prefixCount != 1 || orderBy.size() > fields.size() - pinned) return 2;
    int direction = 0;
    int i = pinned;
    for (Map.Entry<String, Object> e : orderBy.entrySet()) {
      if (!e.getKey().equals(fields.get(i++))) return 2;
      if (!(e.getValue() instanceof Number n)) return 2;
      int d = n.intValue() >= 0 ? 1 : -1;
      if (direction != 0 && d != direction) return 2;
      direction = d;
    }
    return direction;
  }

  /** The documents' positions in the plan's ranges, in its walk direction. */
  Stream<Object> positions(Plan plan) {
    return positions(plan, plan.sort < 0);
  }

  /**
   * How many entries the plan's ranges hold, counted up to `cap`, always forwards: a backward step in a skip list is a
   * search from its head (log n key comparisons), and a count needs no order. Counted backwards, the estimates of a
   * run search grew with the stored runs (B11: +0.3-0.8 ms a query at 100 000 runs).
   */
  long countUpTo(Plan plan, long cap) {
    return positions(plan, false).limit(cap).count();
  }

  private Stream<Object> positions(Plan plan, boolean backwards) {
    return plan.prefixes.stream().flatMap(prefix -> {
      List<Object> low = new ArrayList<>(prefix);
      List<Object> high = new ArrayList<>(prefix);
      int lowBound = -1;
      int highBound = 1;
      if (plan.lower != null) {
        low.add(plan.lower);
        lowBound = plan.lowerInclusive ? -1 : 1;
      }
      if (plan.upper != null) {
        high.add(plan.upper);
        highBound = plan.upperInclusive ? 1 : -1;
      }
      Key from = new Key(low.toArray(), lowBound);
      Key to = new Key(high.toArray(), highBound);
      if (from.compareTo(to) > 0) return Stream.empty();
      NavigableMap<Key, Object> range = entries.subMap(from, true, to, true);
      return (backwards ? range.descendingMap() : range).values().stream();
    });
  }

  /**
   * A value a field can be pinned to: a scalar, or null (which matches null and a missing field, both indexed as null)
   * except in a sparse index, which leaves out documents without its fields.
   */
  private boolean isPinnable(Object v) {
    return v == null ? !isSparse() : isScalar(v);
  }

  private static boolean isScalar(Object v) {
    return v != null && !(v instanceof Missing) && !(v instanceof Map) && !(v instanceof Collection)
        && !(v instanceof de.bwaldvogel.mongo.bson.BsonRegularExpression);
  }

  /** As mongo-java-server normalises index values: numbers compare as doubles, null and missing alike. */
  static Object normalize(Object value) {
    if (value == null || value instanceof Missing) return null;
    if (value instanceof Long l && l.longValue() != (long) l.doubleValue()) return value;
    if (value instanceof Number n) {
      double d = n.doubleValue();
      return d == -0.0 ? 0.0 : d;
    }
    return value;
  }

  /** Which index to use and how: the pinned prefixes, an optional range on the next field, the walk direction. */
  record Plan(OrderedIndex index, List<List<Object>> prefixes, int pinned, Object lower, boolean lowerInclusive,
      Object upper, boolean upperInclusive, int sort) {
    boolean sorted() {
      return sort != 2;
    }

    /** Better plans serve the sort, then pin more fields, then take a range, then need fewer ranges. */
    static final Comparator<Plan> BETTER = Comparator.<Plan>comparingInt(p -> p.sorted() ? 1 : 0)
        .thenComparingInt(Plan::pinned)
        .thenComparingInt(p -> p.lower != null || p.upper != null ? 1 : 0)
        .thenComparingInt(p -> -p.prefixes.size());
  }

  /**
   * An entry's values, or a bound of a range: a bound is a prefix with `bound` -1 (before every entry starting with
   * it) or +1 (after every such entry). Values compare as mongo-java-server's ValueComparator orders them.
   */
  record Key(Object[] values, int bound) implements Comparable<Key> {
    private static final Comparator<Object> VALUES = ValueComparator.asc();

    @Override
    public int compareTo(Key other) {
      int n = Math.min(values.length, other.values.length);
      for (int i = 0; i < n; i++) {
        int c = VALUES.compare(values[i], other.values[i]);
        if (c != 0) return c;
      }
      if (values.length == other.values.length) return Integer.compare(bound, other.bound);
      return values.length < other.values.length ? (bound > 0 ? 1 : -1) : (other.bound > 0 ? -1 : 1);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && compareTo(k) == 0;
    }

    @Override
    public int hashCode() {
      return 0; // Keys live in a sorted map only.
    }
  }
}
