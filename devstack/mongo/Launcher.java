import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * Embedded MongoDB wire server for machines without a mongod: mongo-java-server on an H2 file, with queries
 * planned on indexes (IndexedH2Backend).
 * Usage: java -cp 'mongo-lib/*' Launcher.java <data-file> <port>   (port 0 picks a free one)
 * Prints "listening 127.0.0.1:<port>" once it accepts connections; SIGTERM flushes and closes the file.
 */
public class Launcher {
  /**
   * The library's own ServerVersion.MONGO_5_0 reports wire version 8, and the mongodb 7.x Node driver refuses
   * servers below wire version 9. The commands we use behave as in 5.0, so we announce 5.0 with its real wire version 13.
   */
  static final MongoVersion MONGO_5_0_WIRE_13 = new MongoVersion() {
    public List<Integer> getVersionArray() { return List.of(5, 0, 0); }
    public int getWireVersion() { return 13; }
  };

  public static void main(String[] args) {
    if (args.length != 2) {
      System.err.println("usage: Launcher <data-file> <port>");
      System.exit(2);
    }
    IndexedH2Backend backend = IndexedH2Backend.open(args[0]);
    backend.version(MONGO_5_0_WIRE_13);
    MongoServer server = new MongoServer(backend);
    server.bind(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1])));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdownNow();
      backend.close();
    }));
    System.out.println("listening 127.0.0.1:" + server.getLocalAddress().getPort());
    System.out.flush();
  }
}
