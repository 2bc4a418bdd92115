import { describe, expect, it } from 'vitest';
import { explainPrototypeKey, findPrototypeKey, mayHoldPrototypeKey } from '../../src/kit/prototype-keys.js';

describe('findPrototypeKey', () => {
  it('points at the first "__proto__" key, at any depth and inside arrays', () => {
    expect(findPrototypeKey(JSON.parse('{"__proto__":1}'))).toBe('/__proto__');
    expect(findPrototypeKey(JSON.parse('{"a":{"b":[{"c":1},{"__proto__":{}}]}}'))).toBe('/a/b/1/__proto__');
    expect(findPrototypeKey(JSON.parse('[[{"x":{"__proto__":null}}]]'))).toBe('/0/0/x/__proto__');
  });

  it('escapes the path as a JSON Pointer', () => {
    expect(findPrototypeKey(JSON.parse('{"a/b":{"c~d":{"__proto__":1}}}'))).toBe('/a~1b/c~0d/__proto__');
  });

  it('finds nothing in ordinary JSON, nor where the name is only a value or part of a key', () => {
    expect(findPrototypeKey(JSON.parse('{"name":"__proto__","list":["__proto__"],"__proto__x":1,"constructor":{"prototype":1}}'))).toBeUndefined();
    for (const scalar of [null, 1, 'text', true, undefined]) expect(findPrototypeKey(scalar)).toBeUndefined();
  });

  it('does not see an object whose prototype was set: that happened before, where the key was copied', () => {
    const copied = Object.assign({}, JSON.parse('{"__proto__":{"name":"x"}}') as object);
    expect(findPrototypeKey(copied)).toBeUndefined();
  });

  it('stops at maxDepth levels', () => {
    const deep = JSON.parse('{"a":{"a":{"a":{"__proto__":1}}}}') as unknown;
    expect(findPrototypeKey(deep, 4)).toBe('/a/a/a/__proto__');
    expect(findPrototypeKey(deep, 3)).toBeUndefined();
  });
});

describe('mayHoldPrototypeKey', () => {
  it('is true for the name and for any \\u escape, which could spell it', () => {
    expect(mayHoldPrototypeKey('{"__proto__":1}')).toBe(true);
    expect(mayHoldPrototypeKey('{"\\u005f_proto__":1}')).toBe(true);
    expect(findPrototypeKey(JSON.parse('{"\\u005f_proto__":1}'))).toBe('/__proto__');
    expect(mayHoldPrototypeKey('{"request_id":"r-1","parameters":{"text":"ping"}}')).toBe(false);
  });
});

it('explainPrototypeKey names the key, where it is and why it is refused', () => {
  expect(explainPrototypeKey('/a/__proto__')).toBe(
    'a "__proto__" key at /a/__proto__ is refused: JavaScript would take it for the object\'s prototype instead of data',
  );
});
