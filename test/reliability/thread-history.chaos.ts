/** `npm run test:chaos`: the thread history bound at 500 turns of 10 KB messages (60 in the regular suite). */
import { threadHistoryCase } from '../helpers/thread-history';

threadHistoryCase(500);
