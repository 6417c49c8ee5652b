// The worker thread of describe-ahead.ts (its own bundle entry: dist/describe-ahead-worker.js). It may start before
// the scan knows its sessions (while the walk goes on), so its job comes as its first message.
import { parentPort } from 'node:worker_threads';
import { describeFromTheEnd, type DescribeAheadJob } from './describe-ahead';

parentPort?.once('message', (job: DescribeAheadJob) => void describeFromTheEnd(job));
