/**
 * R10 at the API: a request built to be expensive costs about what a harmless request of the same size costs, so one
 * caller cannot freeze the process for everyone (the API is one event loop: /livez waits behind it too).
 */
import { costRatio } from '../helpers/cost-ratio';
import { startTestApi, type TestApi } from '../helpers/stack';
import { createTestUser, type TestUser } from '../helpers/users';
import { actionTemplates } from '../helpers/workflows';

describe('R10: hostile workflow definitions', () => {
  let api: TestApi;
  let user: TestUser;
  let transformId: string;
  beforeAll(async () => {
    api = await startTestApi();
    user = await createTestUser(api.database.db);
    transformId = (await actionTemplates(api.database.db, user.id)).transform._id;
  });
  afterAll(() => api?.close());

  const write = async (text: string): Promise<void> => {
    const body = {
      name: 'hostile',
      steps: [{ id: 's', template_id: transformId, config: { expression: '$', data: text } }],
    };
    const res = await api.http.post('/api/v1/workflows').set(user.auth).send(body);
    // An unclosed "{{" is plain text: both are valid definitions.
    expect(res.status).toBe(201);
  };

  it('an unclosed "{{" with 200 000 spaces is written as fast as plain text of the same size', async () => {
    // The first scanner needed about 2 s for 2 500 spaces (cubic growth): this one would never have finished.
    const attack = `{{${' '.repeat(200_000)}`;
    const harmless = `ab${' '.repeat(200_000)}`;
    expect(
      await costRatio(
        () => write(attack),
        () => write(harmless),
      ),
    ).toBeLessThan(5);
  });

  it('an over-long reference is a 400 naming the field, with a short message', async () => {
    const res = await api.http
      .post('/api/v1/workflows')
      .set(user.auth)
      .send({
        name: 'long ref',
        steps: [
          { id: 's', template_id: transformId, config: { expression: '$', data: `{{input${'.a'.repeat(5000)}}}` } },
        ],
      });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/steps\[0\] \(s\)\.config: .*at most 1024 characters/);
    expect(res.body.error.length).toBeLessThan(400);
  });
});
