// The obvious alternative to each object-store command, as a bare SDK program
// timed the same way (process start to exit, same client settings as
// spillway's: default credential chain, path-style, checksums when required):
//   put BUCKET PREFIX FILE...      a PutObject loop, one file after another
//   upload BUCKET KEY FILE         lib-storage's Upload (its default parts) of one file
//   list BUCKET PREFIX             a ListObjectsV2 loop, each key and size printed
//   get BUCKET KEY OUT             GetObject of the whole object into OUT
//   grep BUCKET PREFIX DIR NEEDLE  every object downloaded into DIR (4 at once), then rg -n -F NEEDLE DIR
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const client = new S3Client({
  endpoint: process.env.AWS_ENDPOINT_URL,
  forcePathStyle: true,
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
const [mode, bucket, ...rest] = process.argv.slice(2);

async function* keys(prefix) {
  let token;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) yield o;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

async function download(key, out) {
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  await pipeline(got.Body, createWriteStream(out));
}

if (mode === 'put') {
  const [prefix, ...files] = rest;
  for (const f of files) await client.send(new PutObjectCommand({ Bucket: bucket, Key: prefix + path.basename(f), Body: readFileSync(f) }));
} else if (mode === 'upload') {
  const [key, file] = rest;
  await new Upload({ client, params: { Bucket: bucket, Key: key, Body: createReadStream(file) } }).done();
} else if (mode === 'list') {
  const lines = [];
  for await (const o of keys(rest[0])) {
    lines.push(`${o.Size}\t${o.Key}\n`);
    if (lines.length >= 1000) process.stdout.write(lines.splice(0).join(''));
  }
  process.stdout.write(lines.join(''));
} else if (mode === 'get') {
  await download(rest[0], rest[1]);
} else if (mode === 'grep') {
  const [prefix, dir, needle] = rest;
  const all = [];
  for await (const o of keys(prefix)) all.push(o.Key);
  let next = 0;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next < all.length) {
      const key = all[next++];
      const out = path.join(dir, key);
      mkdirSync(path.dirname(out), { recursive: true });
      await download(key, out);
    }
  }));
  const r = spawnSync('rg', ['-n', '-F', needle, dir], { stdio: ['ignore', 'inherit', 'inherit'] });
  process.exitCode = r.status ?? 1;
} else {
  throw new Error(`unknown mode ${mode}`);
}
client.destroy();
