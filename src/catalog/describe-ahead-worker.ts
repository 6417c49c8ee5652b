// The worker thread of describe-ahead.ts (its own bundle entry: dist/describe-ahead-worker.js).
import { workerData } from 'node:worker_threads';
import { describeFromTheEnd, type DescribeAheadJob } from './describe-ahead';

void describeFromTheEnd(workerData as DescribeAheadJob);
