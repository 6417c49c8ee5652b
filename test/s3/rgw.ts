// A throwaway Ceph RGW for one test file: started on free ports by rgw-start.sh, stopped by rgw-stop.sh.
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const HERE = __dirname;

export interface Rgw {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The environment a child process needs to reach this server through the SDK's default chain. */
  env: NodeJS.ProcessEnv;
  client(): S3Client;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** A port nothing listens on now (the kernel's pick for port 0, closed again). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startRgw(opts: { backend?: 'memstore' | 'bluestore'; memstoreBytes?: number } = {}): Promise<Rgw> {
  // Short: the cluster's admin sockets live in it (a UNIX socket path is at most 107 bytes).
  let dir = '';
  let stdout = '';
  // A port found free may be taken before the server binds it (another cluster's OSD, another test): fresh ports then.
  for (let attempt = 1; ; attempt++) {
    dir = mkdtempSync('/tmp/swrgw-');
    const [s3Port, monPort] = [await freePort(), await freePort()];
    const env = { ...process.env, CEPH_DIR: dir, S3_PORT: String(s3Port), MON_PORT: String(monPort), OSD_BACKEND: opts.backend ?? 'memstore', ...(opts.memstoreBytes ? { MEMSTORE_BYTES: String(opts.memstoreBytes) } : {}) };
    try {
      ({ stdout } = await run(path.join(HERE, 'rgw-start.sh'), [], { env, maxBuffer: 16 << 20 }));
      break;
    } catch (err) {
      const why = (err as { stderr?: string }).stderr ?? (err as Error).message;
      if (attempt < 3 && /Address already in use/.test(why)) continue;
      throw new Error(`Ceph RGW did not start (npm test installs it: node scripts/setup.mjs s3): ${why}`);
    }
  }
  const vars = Object.fromEntries(stdout.trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]));
  const endpoint = vars.S3_ENDPOINT!;
  const accessKeyId = vars.S3_ACCESS_KEY!;
  const secretAccessKey = vars.S3_SECRET_KEY!;
  const clients: S3Client[] = [];
  const rgw: Rgw = {
    endpoint,
    accessKeyId,
    secretAccessKey,
    env: { AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: 'us-east-1' },
    client() {
      const c = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
      clients.push(c);
      return c;
    },
    async createBucket(name) {
      await rgw.client().send(new CreateBucketCommand({ Bucket: name }));
    },
    async stop() {
      for (const c of clients) c.destroy();
      await run(path.join(HERE, 'rgw-stop.sh'), [dir], { env: { ...process.env, STOP_GRACE: '1' } });
    },
  };
  return rgw;
}
