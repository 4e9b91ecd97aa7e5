/** Real users with real API keys, created through the same repository the CLI uses. */
import type { Db } from 'mongodb';
import { createApiKey, createUser } from '../../db/users';
import { uniqueId } from './stack';

export interface TestUser {
  id: string;
  key: string;
  /** `{ Authorization: 'Bearer …' }` for supertest's .set() */
  auth: { Authorization: string };
}

export async function createTestUser(db: Db, name = uniqueId('user-')): Promise<TestUser> {
  const user = await createUser(db, name);
  const { key } = await createApiKey(db, user._id);
  return { id: user._id, key, auth: { Authorization: `Bearer ${key}` } };
}
