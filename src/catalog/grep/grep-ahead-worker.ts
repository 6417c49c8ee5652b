// The worker thread of grep-ahead.ts (its own bundle entry: dist/grep-ahead-worker.js).
import { workerData } from 'node:worker_threads';
import { searchFromTheEnd, type SearchAheadJob } from './grep-ahead';

void searchFromTheEnd(workerData as SearchAheadJob);
