/** The preview bundle as the stack builds it: it must load without sharp (only the worker has the layer). */
import * as esbuild from 'esbuild';
import { previewEsbuildOptions, RUNTIME_PROVIDED } from '../../cdk/constructs/bundling';

test('the preview bundle has the AWS adapters only: no sharp, no local job runner, and the AWS SDK left to the runtime', async () => {
  const out = await esbuild.build({ ...previewEsbuildOptions('/tmp/linklens-preview-check.mjs'), write: false });
  const code = out.outputFiles[0].text;
  expect(code).not.toMatch(/from"sharp"/);
  expect(code).toMatch(/from"@aws-sdk\/client-sqs"/);
  expect(code).not.toContain('LINKLENS_BUNDLE_AWS_ONLY');
  expect(out.outputFiles[0].contents.length).toBeLessThan(4 * 1024 * 1024);
});

test('the key digests of a parameter or a secret: Powertools parameters is inside the bundle, the SSM and Secrets Manager clients are the runtime\'s', async () => {
  const out = await esbuild.build({ ...previewEsbuildOptions('/tmp/linklens-preview-check.mjs'), write: false, metafile: true });
  const code = out.outputFiles[0].text;
  const inputs = Object.keys(out.metafile!.inputs);
  for (const file of ['parameters/lib/esm/ssm/SSMProvider.js', 'parameters/lib/esm/secrets/SecretsProvider.js', 'parameters/lib/esm/base/BaseProvider.js']) {
    expect(inputs.some((i) => i.endsWith(`@aws-lambda-powertools/${file}`))).toBe(true);
  }
  expect(code).not.toMatch(/from"@aws-lambda-powertools\/parameters/);
  expect(code).toMatch(/from"@aws-sdk\/client-ssm"/);
  expect(code).toMatch(/from"@aws-sdk\/client-secrets-manager"/);
  expect(RUNTIME_PROVIDED).toEqual(['@aws-sdk/*']);
  expect(inputs.some((i) => i.includes('node_modules/@aws-sdk/'))).toBe(false);
});
