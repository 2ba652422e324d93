import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { LinkPreviewService, type LinkPreviewServiceProps } from './link-preview-service.js';

export interface LinkPreviewStackProps extends StackProps, LinkPreviewServiceProps {}

/**
 * This repository's stack (cdk/app.ts): the LinkPreviewService and its outputs. The service's id
 * is `Default`, which CDK leaves out of logical ids: the resources keep the ids they had when
 * the stack built them itself.
 */
export class LinkPreviewStack extends Stack {
  readonly service: LinkPreviewService;

  constructor(scope: Construct, id: string, props: LinkPreviewStackProps) {
    super(scope, id, props);
    const service = new LinkPreviewService(this, 'Default', props);
    this.service = service;

    new CfnOutput(this, 'ApiUrl', { value: service.api.url, description: 'POST here with "Authorization: Bearer <key>"' });
    service.store.addOutputs(this);
    new CfnOutput(this, 'PreviewFunctionName', { value: service.previewFunction.functionName, description: 'For direct invocation from other Lambdas' });
    new CfnOutput(this, 'PreviewFunctionArn', {
      value: service.previewFunction.functionArn,
      description: 'Grant lambda:InvokeFunction on this ARN to callers',
    });
    new CfnOutput(this, 'JobQueueUrl', { value: service.jobs.queue.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: service.jobs.deadLetterQueue.queueUrl });
    if (service.browserJobs) new CfnOutput(this, 'BrowserQueueUrl', { value: service.browserJobs.queue.queueUrl });
    if (service.alarms.topic) new CfnOutput(this, 'AlarmTopicArn', { value: service.alarms.topic.topicArn });
    if (service.batches) {
      new CfnOutput(this, 'WebhookSecretArn', {
        value: service.batches.secret.secretArn,
        description: "The webhooks' signing secret: receivers verify with whsec_ and its value (aws secretsmanager get-secret-value)",
      });
      new CfnOutput(this, 'WebhookDeadLetterQueueUrl', { value: service.batches.webhooksDeadLetterQueue.queueUrl });
    }
  }
}
