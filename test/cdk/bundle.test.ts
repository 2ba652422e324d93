/** The preview bundle as the stack builds it: it must load without sharp (only the worker has the layer). */
import * as esbuild from 'esbuild';
import { previewEsbuildOptions } from '../../cdk/constructs/bundling';

test('the preview bundle has the AWS adapters only: no sharp, no local job runner, and the AWS SDK left to the runtime', async () => {
  const out = await esbuild.build({ ...previewEsbuildOptions('/tmp/linklens-preview-check.mjs'), write: false });
  const code = out.outputFiles[0].text;
  expect(code).not.toMatch(/from"sharp"/);
  expect(code).toMatch(/from"@aws-sdk\/client-sqs"/);
  expect(code).not.toContain('LINKLENS_BUNDLE_AWS_ONLY');
  expect(out.outputFiles[0].contents.length).toBeLessThan(4 * 1024 * 1024);
});
