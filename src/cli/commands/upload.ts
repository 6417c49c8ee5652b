// `spillway upload`: copies the blobs queued for the object store (SPILLWAY_STORE / --store) to it,
// each once; what fails stays queued. `spillway spill` starts it detached after each spill.
import { parseArgs } from 'node:util';
import { newS3Client } from '../../spill/remote/s3-client';
import { drainUploads } from '../../spill/remote/uploader';
import { uploadQueueDir } from '../../spill/remote/upload-queue';
import { UsageError, type CliCommand } from '../io';

const HELP = `usage: spillway upload [--quiet]

Copies the blobs queued for the object store (SPILLWAY_STORE=s3://BUCKET/PREFIX,
or spill --store) to it, each once, and removes each from the queue once its
copy is confirmed. What fails stays queued for the next run. Credentials,
region and endpoint come from the AWS SDK's default chain (AWS_PROFILE,
AWS_ACCESS_KEY_ID, AWS_REGION, AWS_ENDPOINT_URL).
`;

export const uploadCommand: CliCommand = async (argv, io) => {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { quiet: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  const client = newS3Client(io.env);
  try {
    const r = await drainUploads(uploadQueueDir(io.env), client);
    if (!values.quiet) {
      if (r.busy) io.stdout(`another upload is running; ${r.pending} queued\n`);
      else io.stdout(`uploaded ${r.uploaded}, already there ${r.present}, local blob gone ${r.dropped}, still queued ${r.pending}\n`);
    }
    if (r.error) {
      io.stderr(`spillway upload: ${r.error}; ${r.pending} kept in the queue for the next run\n`);
      return 1;
    }
    return 0;
  } finally {
    client.destroy();
  }
};
