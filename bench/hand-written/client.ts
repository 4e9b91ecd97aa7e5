/** The bench's calls to the hand-written service: the same node:http client on kept connections as Stepwise's arm. */
import { ApiClient } from '../api-client';

export class HandWrittenClient {
  private readonly http: ApiClient;

  constructor(
    readonly baseUrl: string,
    readonly key: string,
    private readonly workflowId: string,
  ) {
    this.http = new ApiClient(baseUrl, key);
  }

  /** T1: a new chat's id. */
  async newChat(): Promise<string> {
    return (await this.http.call<{ id: string }>('POST', '/chats', {})).data.id;
  }

  /** T1: a chat message; the workflow id of its turn. */
  async sendMessage(chatId: string, text: string, model: string): Promise<string> {
    const { data } = await this.http.call<{ workflow_id: string }>('POST', `/chats/${chatId}/messages`, {
      text,
      model,
    });
    return data.workflow_id;
  }

  async startRun(input: Record<string, unknown>): Promise<string> {
    const { data } = await this.http.call<{ run_id: string }>('POST', `/workflows/${this.workflowId}/run`, { input });
    return data.run_id;
  }

  /** Status reads that wait for the end (`?wait=`), as the Stepwise arm's; throws unless the run completed. */
  async waitForCompletion(runId: string): Promise<void> {
    for (;;) {
      const { data } = await this.http.call<{ status: string }>('GET', `/runs/${runId}/status?wait=10`);
      if (data.status === 'completed') return;
      if (data.status === 'failed') throw new Error(`hand-written run ${runId} failed`);
    }
  }

  close(): void {
    this.http.close();
  }
}
