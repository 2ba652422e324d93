import { createHash } from 'node:crypto';
import { Arn, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { ENV } from '../../lib/core-settings.js';

/**
 * The reply queues: each preview container makes an SQS queue of its own on first use and
 * long-polls it for its job results, which the workers send there (lib/adapters/aws/reply-queue.ts).
 * The queues are not in the template (they live as long as a container); this construct names
 * their prefix, unique to this service in its account and region, and grants on that prefix only.
 */
export class ReplyQueues extends Construct {
  /** The names of this service's reply queues start with it. */
  readonly namePrefix: string;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const stack = Stack.of(this);
    const stackName = Token.isUnresolved(stack.stackName) ? '' : stack.stackName;
    this.namePrefix = `linklens-reply-${createHash('sha256').update(`${stackName}/${this.node.addr}`).digest('hex').slice(0, 10)}-`;
  }

  private arn(): string {
    return Arn.format({ service: 'sqs', resource: `${this.namePrefix}*` }, Stack.of(this));
  }

  /** The preview function makes, reads and (when stale) deletes reply queues of the prefix. */
  grantOwner(fn: lambda.Function): void {
    fn.addEnvironment(ENV.replyQueuePrefix, this.namePrefix);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['sqs:CreateQueue', 'sqs:TagQueue', 'sqs:ReceiveMessage', 'sqs:DeleteQueue', 'sqs:GetQueueUrl'],
        resources: [this.arn()],
      }),
    );
    // ListQueues has no resource-level permission: it lists names only (filtered by the prefix in the call).
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:ListQueues'], resources: ['*'] }));
  }

  /** A worker sends results to reply queues of the prefix (and to no other queue it is told of). */
  grantReply(fn: lambda.Function): void {
    fn.addEnvironment(ENV.replyQueuePrefix, this.namePrefix);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.arn()] }));
  }
}
