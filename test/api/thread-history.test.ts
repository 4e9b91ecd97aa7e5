/** Threads keep Temporal's history small: 60 turns in the regular suite (500 in `npm run test:chaos`). */
import { threadHistoryCase } from '../helpers/thread-history';

threadHistoryCase(60);
