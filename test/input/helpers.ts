// Shared assertions for the input-layer tests.
import { expect } from 'vitest';
import { InputError } from '../../src/core/errors.ts';

/** Runs `fn`, expects an InputError, and returns it for further checks. */
export function inputErrorOf(fn: () => unknown): InputError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError, but nothing was thrown');
}

/** Same for async readers. */
export async function inputErrorOfAsync(fn: () => Promise<unknown>): Promise<InputError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError, but nothing was rejected');
}

/** Expects an InputError naming exactly this object and field, with a problem containing `problem`. */
export function expectInputError(fn: () => unknown, object: string, field: string, problem: string): InputError {
  const error = inputErrorOf(fn);
  expect({ object: error.object, field: error.field }).toEqual({ object, field });
  expect(error.problem).toContain(problem);
  return error;
}
