// Generated from the mcp-recovery-model types by `cargo xtask codegen`; do not edit.

/**
 * Hints about a tool's behavior, plus the SEP-3172 `recovery` field.
 */
export interface ToolAnnotations {
  /**
   * Human-readable title.
   */
  title?: string;

  /**
   * The tool does not modify its environment (default false).
   */
  readOnlyHint?: boolean;

  /**
   * The tool may perform destructive updates (default true).
   */
  destructiveHint?: boolean;

  /**
   * Repeating a call with the same arguments has no further effect (default false).
   */
  idempotentHint?: boolean;

  /**
   * The tool interacts with an open world of external entities (default true).
   */
  openWorldHint?: boolean;

  /**
   * SEP-3172: how to compensate a completed call.
   */
  recovery?: Recovery;
}

/**
 * How to compensate a completed call of this tool (SEP-3172). The strategy `compensation` requires `compensatingOperation`; other strategies are reserved for future revisions, accepted with any other members, and ignored by orchestrators.
 *
 * @remarks
 * The JSON Schema requires `compensatingOperation` exactly when `strategy` is `compensation`; TypeScript cannot make a member conditionally required, so it is optional here and the generated JSON Schema accepts a `compensation` strategy without it, and checks it under other strategies too.
 *
 * @example With a compensating operation bound from the response and the request
 * {@includeCode ./examples/Tool/with-recovery-compensating-operation.json}
 *
 * @example With recovery declared in both carriers
 * {@includeCode ./examples/Tool/with-recovery-in-both-carriers.json}
 *
 * @example With template and constant bindings
 * {@includeCode ./examples/Tool/with-recovery-template-binding.json}
 *
 * @example With a tool that is its own compensation
 * {@includeCode ./examples/Tool/with-recovery-self-inverse.json}
 */
export interface Recovery {
  /**
   * `compensation`; other values are reserved and ignored by orchestrators.
   */
  strategy: string;

  compensatingOperation?: CompensatingOperation;
}

/**
 * SEP-3172 `compensatingOperation`.
 */
export interface CompensatingOperation {
  /**
   * Name of a tool of the same server.
   */
  operationId: string;

  /**
   * Argument name → binding (runtime expression, template or constant).
   */
  parameters: { [key: string]: RecoveryBinding };
}

/**
 * A parameter value: a runtime expression (a string starting with `$`), a template string with embedded `{$…}` expressions, or a constant of any other JSON type.
 *
 * @remarks
 * TypeScript does not check the grammar of these strings; the pattern tag carries it into the generated JSON Schema.
 *
 * The schema generator reads a plain `number` as an integer and drops `null` from unions, so the type tag lists every JSON type.
 *
 * @TJS-type ["string", "number", "boolean", "null", "object", "array"]
 *
 * @pattern (?:^\$(?:url|method|statusCode|(?:request|response)\.(?:header\.[!#$%&'*+.^_\x60|~0-9A-Za-z-]+|(?:query|path)\.[\x01-\x7F]*|body(?:#(?:\x2F(?:[^\x2F~]|~[01])*)*)?))$)|(?:^(?:(?:[^{$]|\{+(?:[^{$]|$)|\{+\$(?:url|method|statusCode|(?:request|response)\.(?:header\.[!#$%&'*+.^_\x60|~0-9A-Za-z-]+|(?:query|path)\.[\x01-\x7C\x7E\x7F]*|body(?:#(?:\x2F(?:[^\x2F~}]|~[01])*)*)?))\})(?:[^{]|\{+(?:[^{$]|$)|\{+\$(?:url|method|statusCode|(?:request|response)\.(?:header\.[!#$%&'*+.^_\x60|~0-9A-Za-z-]+|(?:query|path)\.[\x01-\x7C\x7E\x7F]*|body(?:#(?:\x2F(?:[^\x2F~}]|~[01])*)*)?))\})*)?$)
 */
export type RecoveryBinding =
  string | number | boolean | null | { [key: string]: unknown } | unknown[];

/**
 * An OpenAPI runtime expression such as `$response.body#/transactionId`.
 *
 * @remarks
 * TypeScript does not check the grammar of these strings; the pattern tag carries it into the generated JSON Schema.
 *
 * @pattern ^\$(?:url|method|statusCode|(?:request|response)\.(?:header\.[!#$%&'*+.^_\x60|~0-9A-Za-z-]+|(?:query|path)\.[\x01-\x7F]*|body(?:#(?:\x2F(?:[^\x2F~]|~[01])*)*)?))$
 */
export type RuntimeExpression = string;
