/**
 * The API's Temporal client closed while a call waits to retry (shared/closed-channel-guard.ts): the call ends with
 * an error instead of its retry timer throwing "Channel has been shut down" into whatever runs next in the process
 * (the chaos suite's next file died of it after R3 closed its API while Temporal was away).
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createTemporalClient } from '../../shared/temporal-client';

describe('a Temporal client closed while a call waits to retry', () => {
  let server: net.Server | undefined;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);

  beforeAll(() => process.on('uncaughtException', onUncaught));
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  it('ends the call with an error, and nothing throws from the retry timer', async () => {
    // A "server" that accepts and drops every connection: the call fails as unavailable and the client schedules its
    // retry. The client is closed as the first connection arrives: before that failure, so before the retry.
    let close: () => void = () => undefined;
    server = net.createServer((socket) => {
      socket.destroy();
      close();
      close = () => undefined;
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const client = createTemporalClient({
      address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
      namespace: 'default',
      codecKeys: [],
    });
    close = () => void client.connection.close();
    await expect(client.workflowService.getSystemInfo({})).rejects.toThrow(/closed/);
    expect(uncaught).toEqual([]);
  });
});
