import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind, visit, type DocumentNode, type ValueNode } from 'graphql';
import {
  MAX_INPUT_DEPTH,
  findInputProblem,
  inputProblemMessage,
  refusedCharacter,
  type InputProblem,
} from '../text';

/**
 * The text rule of every edge (src/text.ts) on GraphQL's own input, before anything runs: the
 * variables, the operation name, and every string literal of the document (a `"\u0007"` escape
 * in a literal is a control character once parsed). Refused as INVALID (HTTP 400)
 * naming the variable (`$input.names[0].name`) or the argument (`input.names[0].name`).
 */
export function inputGuard<T extends object>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document }) {
          const refused = inputRefusal({ ...request, document });
          if (refused) throw refused;
        },
      };
    },
  };
}

/**
 * The refusal (INVALID) of an operation whose name, variables or literals hold refused text;
 * undefined when none does. Every transport's operations pass here.
 */
export function inputRefusal({
  operationName,
  variables,
  document,
}: {
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  document: DocumentNode;
}): GraphQLError | undefined {
  const problem =
    problemOfOperationName(operationName) ??
    problemOfVariables(variables ?? undefined) ??
    problemOfDocument(document);
  return problem ? refusal(problem) : undefined;
}

function problemOfOperationName(name: string | null | undefined): InputProblem | undefined {
  return typeof name === 'string' ? findInputProblem(name, 'operationName') : undefined;
}

function problemOfVariables(
  variables: Record<string, unknown> | undefined,
): InputProblem | undefined {
  for (const [name, value] of Object.entries(variables ?? {})) {
    const problem = findInputProblem(value, `$${name}`);
    if (problem) return problem;
  }
  return undefined;
}

/** The first refused literal: in a field's or directive's argument, or a variable's default. */
function problemOfDocument(document: DocumentNode): InputProblem | undefined {
  let problem: InputProblem | undefined;
  visit(document, {
    Argument(node) {
      problem ??= problemOfValue(node.value, node.name.value, 0);
      return false;
    },
    VariableDefinition(node) {
      if (node.defaultValue) {
        problem ??= problemOfValue(node.defaultValue, `$${node.variable.name.value}`, 0);
      }
    },
  });
  return problem;
}

function problemOfValue(node: ValueNode, field: string, depth: number): InputProblem | undefined {
  switch (node.kind) {
    case Kind.STRING: {
      const codePoint = refusedCharacter(node.value);
      return codePoint === undefined
        ? undefined
        : { kind: 'character', field, codePoint, inKey: false };
    }
    case Kind.LIST:
    case Kind.OBJECT: {
      if (depth >= MAX_INPUT_DEPTH) return { kind: 'depth', field };
      if (node.kind === Kind.LIST) {
        for (const [i, item] of node.values.entries()) {
          const problem = problemOfValue(item, `${field}[${i}]`, depth + 1);
          if (problem) return problem;
        }
        return undefined;
      }
      for (const item of node.fields) {
        const problem = problemOfValue(item.value, `${field}.${item.name.value}`, depth + 1);
        if (problem) return problem;
      }
      return undefined;
    }
    case Kind.VARIABLE:
    case Kind.INT:
    case Kind.FLOAT:
    case Kind.BOOLEAN:
    case Kind.NULL:
    case Kind.ENUM:
      return undefined;
  }
}

function refusal(problem: InputProblem): GraphQLError {
  const message = inputProblemMessage(problem);
  return new GraphQLError(message, {
    extensions: {
      code: 'INVALID',
      fieldErrors: { [problem.field]: [message] },
      http: { status: 400 },
    },
  });
}
