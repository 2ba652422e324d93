import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_LIMIT } from './preview-function.js';

/** The stage's throttle when none is given: steady requests per second and burst. */
export const DEFAULT_THROTTLE = { rateLimit: 20, burstLimit: 40 } as const;

export interface PreviewApiProps {
  handler: lambda.IFunction;
  /** Steady-state requests per second and burst for the whole stage; either left out: DEFAULT_THROTTLE's. */
  throttle?: { rateLimit?: number; burstLimit?: number };
  /** Browser origins allowed to call the API (CORS); none: CORS is off. */
  corsOrigins?: string[];
  logRetention?: logs.RetentionDays;
  /** The playground's routes (GET /, /playground.js, /playground.css; lib/playground/page.ts). Default true. */
  playground?: boolean;
  /** The batches' routes (POST /previews, GET /previews/{batchId}). Default false. */
  batches?: boolean;
}

/**
 * An HTTP API (API Gateway v2) whose routes all go to the preview function (payload v2): POST /,
 * GET /oembed (the same preview as an oEmbed response), GET /status and GET /openapi.json; a
 * $default stage with throttling and JSON access logs, and CORS only when origins are given.
 *
 * The access log records the route key (`GET /oembed`, the route's template), never the request's
 * path or query string: GET /oembed may carry the API key in its query (docs/api.md#oembed-endpoint),
 * and no variable of the format below holds it (test/cdk/stack.test.ts checks the list).
 */
export class PreviewApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;

  constructor(scope: Construct, id: string, props: PreviewApiProps) {
    super(scope, id);
    const cors = props.corsOrigins?.length
      ? {
          allowOrigins: props.corsOrigins,
          allowMethods: [apigw.CorsHttpMethod.POST, apigw.CorsHttpMethod.GET, apigw.CorsHttpMethod.OPTIONS],
          allowHeaders: ['authorization', 'content-type', 'accept', 'accept-language'],
          exposeHeaders: ['x-request-id', 'server-timing', 'x-linklens-upstream-error', 'location', 'retry-after'],
          maxAge: Duration.days(1),
        }
      : undefined;
    this.api = new apigw.HttpApi(this, 'HttpApi', {
      description: 'linklens: POST / with a bearer key returns a Link record; GET /oembed the same as oEmbed',
      createDefaultStage: false,
      corsPreflight: cors,
    });
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const throttle = {
      rateLimit: props.throttle?.rateLimit ?? DEFAULT_THROTTLE.rateLimit,
      burstLimit: props.throttle?.burstLimit ?? DEFAULT_THROTTLE.burstLimit,
    };
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            ip: '$context.identity.sourceIp',
            requestTime: '$context.requestTime',
            method: '$context.httpMethod',
            routeKey: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            latency: '$context.responseLatency',
            integrationLatency: '$context.integration.latency',
            integrationError: '$context.integrationErrorMessage',
          }),
        ),
      },
    });
    const integration = new HttpLambdaIntegration('Preview', props.handler, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
      timeout: API_LIMIT,
    });
    this.api.addRoutes({ path: '/', methods: [apigw.HttpMethod.POST], integration });
    // oEmbed: the same function and preview, with the same key (checked by the handler).
    this.api.addRoutes({ path: '/oembed', methods: [apigw.HttpMethod.GET], integration });
    // Batches: the same function, with the same key (checked by the handler, which keeps each batch to its key).
    if (props.batches) {
      this.api.addRoutes({ path: '/previews', methods: [apigw.HttpMethod.POST], integration });
      this.api.addRoutes({ path: '/previews/{batchId}', methods: [apigw.HttpMethod.GET], integration });
    }
    // Service status and the OpenAPI document: no key (the handler serves them before the key check).
    this.api.addRoutes({ path: '/status', methods: [apigw.HttpMethod.GET], integration });
    this.api.addRoutes({ path: '/openapi.json', methods: [apigw.HttpMethod.GET], integration });
    // The playground: a static page and its files, no key (the key the user types goes to POST / from the page).
    if (props.playground ?? true) {
      this.api.addRoutes({ path: '/', methods: [apigw.HttpMethod.GET], integration });
      this.api.addRoutes({ path: '/playground.js', methods: [apigw.HttpMethod.GET], integration });
      this.api.addRoutes({ path: '/playground.css', methods: [apigw.HttpMethod.GET], integration });
    }
  }

  /** The API's URL (POST here). */
  get url(): string {
    return `${this.api.apiEndpoint}/`;
  }
}
