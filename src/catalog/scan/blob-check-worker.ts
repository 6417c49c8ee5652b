// The worker thread of blob-check.ts (its own bundle entry: dist/blob-check-worker.js).
import { workerData } from 'node:worker_threads';
import { checkLinesFromTheEnd, type BlobCheckJob } from './blob-check';

checkLinesFromTheEnd(workerData as BlobCheckJob);
