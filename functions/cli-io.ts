/** What the CLI's commands (functions/cli.ts, functions/cli-batch.ts) write to and read from, and the service they preview with. */
export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  env: Record<string, string | undefined>;
}

/** The preview handler with the local defaults, as the CLI runs it (a direct invocation), or the exit code of a bad configuration. */
export interface CliPreviewer {
  preview(link: string, id: string): Promise<Record<string, unknown>>;
}
