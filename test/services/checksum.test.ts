import {
  checksumOf,
  checksumOfList,
  cleanupChecksumFields,
  conceptChecksums,
  isFullySpecifiedNameType,
  mappingChecksums,
  serializeForChecksum,
  type ConceptChecksumInput,
  type MappingChecksumInput,
} from '../../src/services/shared/checksum';

const malaria = {
  name: 'Malaria',
  locale: 'en',
  locale_preferred: true,
  name_type: 'FULLY_SPECIFIED',
};
const paludism = { name: 'Paludism', locale: 'fr', locale_preferred: false, name_type: 'SYNONYM' };
const concept: ConceptChecksumInput = {
  concept_class: 'Diagnosis',
  datatype: 'N/A',
  names: [malaria],
};
const mapping: MappingChecksumInput = {
  map_type: 'SAME-AS',
  from_concept_url: '/orgs/CIEL/sources/CIEL/concepts/116128/',
  to_source_url: '/orgs/WHO/sources/ICD-10-WHO/',
  to_concept_code: 'B54',
};

/** The field dict ocldev builds for a concept's standard checksum, before cleanup. */
function standardFields(names: object[]): Record<string, unknown> {
  return {
    concept_class: 'Diagnosis',
    datatype: 'N/A',
    retired: false,
    external_id: null,
    extras: null,
    names,
    descriptions: [],
    parent_concept_urls: [],
    child_concept_urls: [],
  };
}

describe('golden values (ocldev/checksum.py)', () => {
  it('serializes a concept as ocldev does', () => {
    const fields = standardFields([
      { locale: 'en', locale_preferred: true, name: 'Malaria', name_type: 'FULLY_SPECIFIED' },
    ]);
    expect(serializeForChecksum(cleanupChecksumFields(fields))).toBe(
      '{["concept_class", "datatype", "names"]"Diagnosis","N/A",' +
        '{["locale", "locale_preferred", "name", "name_type"]"en",true,"Malaria","FULLY_SPECIFIED",},}',
    );
    expect(checksumOf(fields)).toBe('e200b92bd2ff4d1ec21c0e83b5f4fa4e');
  });

  it('gives a concept with one fully specified name equal standard and smart checksums', () => {
    expect(conceptChecksums(concept)).toEqual({
      standard: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
      smart: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
    });
  });

  it('changes only the standard checksum when a synonym is added', () => {
    expect(conceptChecksums({ ...concept, names: [malaria, paludism] })).toEqual({
      standard: '92e3dae0aee492909b3284ca4f21734d',
      smart: 'e200b92bd2ff4d1ec21c0e83b5f4fa4e',
    });
  });

  it('derives the from concept code and source from from_concept_url', () => {
    expect(mappingChecksums(mapping)).toEqual({
      standard: '567e1089cf477dacdd8197b602f6baa2',
      smart: '8ab08b49c02ef40c81af1c2409466013',
    });
    expect(
      mappingChecksums({
        map_type: 'SAME-AS',
        from_concept_code: '116128',
        from_source_url: '/orgs/CIEL/sources/CIEL/',
        to_source_url: '/orgs/WHO/sources/ICD-10-WHO/',
        to_concept_code: 'B54',
      }),
    ).toEqual(mappingChecksums(mapping));
  });

  // Further values computed by running the algorithm of ocldev/checksum.py in Python.
  it.each<[string, ConceptChecksumInput, string, string]>([
    [
      'all standard fields',
      {
        concept_class: 'Diagnosis',
        datatype: 'N/A',
        retired: true,
        external_id: 'abc',
        extras: {
          b: [3, 1, 2],
          a: { z: null, y: 1.5 },
          __x: 1,
          c: [{ k: 'v' }, { a: 'b' }],
        },
        names: [
          { ...malaria, external_id: 'e1' },
          { name: 'Palu 😀 ü', locale: 'fr', name_type: 'Fully Specified' },
          { name: 'x"y\'z\\n', locale: 'en', name_type: 'SHORT' },
        ],
        descriptions: [
          {
            description: 'A disease',
            locale: 'en',
            locale_preferred: true,
            description_type: 'Definition',
          },
        ],
        parent_concept_urls: ['/orgs/A/sources/B/concepts/2/', '/orgs/A/sources/B/concepts/1/'],
        child_concept_urls: ['/orgs/A/sources/B/concepts/3/'],
      },
      '796f1ccf943377b7a3378ab836135ca6',
      'ed6cef2bb036a2dfbc723096479ed83b',
    ],
    [
      'floats, control characters and name type spellings',
      {
        concept_class: 'Misc',
        datatype: 'Numeric',
        extras: { w: 1e-5, v: 0.1, u: -2.5, t: 12345.678, s: true, r: '\u0001\u007f\u2028' },
        names: [
          { name: 'A', locale: 'en', name_type: 'fully-specified' },
          { name: 'B', locale: 'en', name_type: 'FULLY SPECIFIED' },
        ],
      },
      '0fbc442d6510bc5901595d4af09be6bd',
      '33786d3164855ce6aee568f799a2b87e',
    ],
  ])('concept: %s', (_label, input, standard, smart) => {
    expect(conceptChecksums(input)).toEqual({ standard, smart });
  });

  it.each<[string, MappingChecksumInput, string, string]>([
    [
      'codes and sources given',
      {
        map_type: 'SAME-AS',
        from_concept_code: '1',
        from_source_url: '/orgs/X/sources/Y/',
        to_concept_code: '2',
        to_source_url: '/orgs/X/sources/Z/',
        sort_weight: 2.5,
      },
      'cb4da52131cdc43ea316c6c15101e9a7',
      '12eba3eeaa52e5a9db35701686a3b788',
    ],
    [
      'zero sort weight and empty extras',
      {
        map_type: 'SAME-AS',
        from_concept_code: '1',
        from_source_url: '/orgs/X/sources/Y/',
        to_concept_code: '2',
        to_source_url: '/orgs/X/sources/Z/',
        sort_weight: 0,
        extras: {},
      },
      'a5af604d28bee5b167cca806cad86eab',
      '12eba3eeaa52e5a9db35701686a3b788',
    ],
    [
      'URL-encoded codes, every standard field',
      {
        map_type: 'NARROWER-THAN',
        from_concept_url: '/orgs/A/sources/B/concepts/A%2FB%20c/',
        to_concept_url: '/users/u/sources/S/concepts/%C3%A9t%C3%A9/',
        sort_weight: 1.0,
        extras: { __a: 1, b: 2 },
        external_id: 'x',
        retired: true,
        from_concept_name: 'n1',
        to_concept_name: 'n2',
        to_source_version: 'v1',
      },
      'd47d6dbf3f32f26d7418b07484498152',
      '0e9cdeb52c8704e3e4820f128e6c692b',
    ],
  ])('mapping: %s', (_label, input, standard, smart) => {
    expect(mappingChecksums(input)).toEqual({ standard, smart });
  });
});

describe('concept checksums', () => {
  it('do not depend on the order of names', () => {
    const synonym = { name: 'Fièvre', locale: 'fr', name_type: 'SYNONYM' };
    expect(conceptChecksums({ ...concept, names: [malaria, paludism, synonym] })).toEqual(
      conceptChecksums({ ...concept, names: [synonym, paludism, malaria] }),
    );
  });

  it('ignore falsy retired, extras, descriptions and concept URLs', () => {
    const expected = conceptChecksums(concept);
    expect(
      conceptChecksums({
        ...concept,
        retired: false,
        extras: {},
        descriptions: [],
        parent_concept_urls: [],
        child_concept_urls: null,
        external_id: null,
      }),
    ).toEqual(expected);
    expect(conceptChecksums({ ...concept, retired: null, extras: null })).toEqual(expected);
    expect(conceptChecksums({ ...concept, retired: true }).standard).not.toBe(expected.standard);
  });

  it('ignore extras keys starting with __', () => {
    const withExtras = conceptChecksums({ ...concept, extras: { source: 'CIEL' } });
    expect(conceptChecksums({ ...concept, extras: { source: 'CIEL', __cascade: 'x' } })).toEqual(
      withExtras,
    );
    expect(withExtras.standard).not.toBe(conceptChecksums(concept).standard);
    expect(withExtras.smart).toBe(conceptChecksums(concept).smart);
  });

  it('change standard but not smart when a synonym is edited', () => {
    const before = conceptChecksums({ ...concept, names: [malaria, paludism] });
    const after = conceptChecksums({
      ...concept,
      names: [malaria, { ...paludism, name: 'Paludisme' }],
    });
    expect(after.standard).not.toBe(before.standard);
    expect(after.smart).toBe(before.smart);
  });

  it('change smart when the fully specified name is edited', () => {
    const after = conceptChecksums({ ...concept, names: [{ ...malaria, name: 'Malaria (P.)' }] });
    expect(after.smart).not.toBe(conceptChecksums(concept).smart);
  });

  it('count `Fully Specified` and `FULLY_SPECIFIED` as fully specified', () => {
    const spellings = ['FULLY_SPECIFIED', 'Fully Specified', 'fully-specified', 'FullySpecified'];
    expect(spellings.map(isFullySpecifiedNameType)).toEqual([true, true, true, true]);
    const others = ['SYNONYM', 'SHORT', '', null, undefined];
    expect(others.map(isFullySpecifiedNameType)).toEqual([false, false, false, false, false]);
    const spelled = conceptChecksums({
      ...concept,
      names: [{ ...malaria, name_type: 'Fully Specified' }],
    });
    expect(spelled.smart).not.toBe(conceptChecksums({ ...concept, names: [] }).smart);
    expect(spelled.smart).not.toBe(conceptChecksums(concept).smart); // the type string differs
  });

  it('hash non-ASCII names as Python json.dumps with ensure_ascii', () => {
    const fields = standardFields([
      { locale: 'fr', locale_preferred: true, name: 'Paludisme é', name_type: 'FULLY_SPECIFIED' },
    ]);
    expect(serializeForChecksum(cleanupChecksumFields(fields))).toBe(
      '{["concept_class", "datatype", "names"]"Diagnosis","N/A",' +
        '{["locale", "locale_preferred", "name", "name_type"]"fr",true,"Paludisme \\u00e9","FULLY_SPECIFIED",},}',
    );
    const names = [{ ...malaria, locale: 'fr', name: 'Paludisme é' }];
    expect(conceptChecksums({ ...concept, names })).toEqual({
      standard: '7641c14f67ec1f338421920a1f4c8524',
      smart: '7641c14f67ec1f338421920a1f4c8524',
    });
  });
});

describe('mapping checksums', () => {
  it('URL-decode codes taken from concept URLs', () => {
    expect(
      mappingChecksums({
        map_type: 'SAME-AS',
        from_concept_url: '/orgs/A/sources/B/concepts/A%2FB%20%C3%A9/',
        to_concept_url: '/orgs/A/sources/C/concepts/1/',
      }),
    ).toEqual(
      mappingChecksums({
        map_type: 'SAME-AS',
        from_concept_code: 'A/B é',
        from_source_url: '/orgs/A/sources/B/',
        to_concept_code: '1',
        to_source_url: '/orgs/A/sources/C/',
      }),
    );
  });

  it('keep given codes and sources over the concept URLs', () => {
    const given = { ...mapping, from_concept_code: 'X', from_source_url: '/orgs/X/sources/X/' };
    expect(mappingChecksums(given).smart).not.toBe(mappingChecksums(mapping).smart);
  });

  it('leave sources, sort weight, extras and external id out of smart', () => {
    const plain = mappingChecksums(mapping);
    const extra = mappingChecksums({
      ...mapping,
      sort_weight: 3,
      extras: { a: 1 },
      external_id: 'e',
      to_source_version: 'v2',
    });
    expect(extra.smart).toBe(plain.smart);
    expect(extra.standard).not.toBe(plain.standard);
  });

  it('ignore retired false, a zero sort weight and extras keys starting with __', () => {
    const plain = mappingChecksums(mapping);
    expect(mappingChecksums({ ...mapping, retired: false, sort_weight: 0, extras: {} })).toEqual(
      plain,
    );
    expect(mappingChecksums({ ...mapping, extras: { a: 1, __b: 2 } })).toEqual(
      mappingChecksums({ ...mapping, extras: { a: 1 } }),
    );
    expect(mappingChecksums({ ...mapping, retired: true }).smart).not.toBe(plain.smart);
  });

  it('read a sort weight given as text', () => {
    expect(mappingChecksums({ ...mapping, sort_weight: '1.0' })).toEqual(
      mappingChecksums({ ...mapping, sort_weight: 1 }),
    );
  });
});

describe('serializer', () => {
  it('writes integer-valued floats as ints', () => {
    expect(serializeForChecksum(1.0)).toBe('1');
    expect(serializeForChecksum({ a: 2.0, b: 2.5 })).toBe('{["a", "b"]2,2.5,}');
    expect(serializeForChecksum(1e-5)).toBe('1e-05');
    expect(checksumOf({ sort_weight: 1.0 })).toBe(checksumOf({ sort_weight: 1 }));
  });

  it('writes scalars as Python json.dumps', () => {
    expect(serializeForChecksum(true)).toBe('true');
    expect(serializeForChecksum(null)).toBe('null');
    expect(serializeForChecksum('a"b\\c\n')).toBe('"a\\"b\\\\c\\n"');
    expect(serializeForChecksum('😀\u007f')).toBe('"\\ud83d\\ude00\\u007f"');
  });

  it('sorts lists and unwraps one-item lists', () => {
    expect(serializeForChecksum(['b', 'a', 'c'])).toBe('["a","b","c"]');
    expect(serializeForChecksum([3, 1, 2])).toBe('[1,2,3]');
    expect(serializeForChecksum(['only'])).toBe('"only"');
    expect(serializeForChecksum([])).toBe('[]');
    expect(serializeForChecksum({})).toBe('{[]}');
  });

  it("orders dicts in lists by Python's str() of them", () => {
    // "{'a': 'z'}" < "{'b': 'a'}": by the first key, not by JSON or the values.
    expect(serializeForChecksum([{ b: 'a' }, { a: 'z' }])).toBe('[{["a"]"z",},{["b"]"a",}]');
    // Code point order: U+1F600 (a surrogate pair in UTF-16) sorts after U+FFFD.
    expect(serializeForChecksum(['😀', '\ufffd'])).toBe('["\\ufffd","\\ud83d\\ude00"]');
  });

  it('combines the checksums of several resources', () => {
    const one = checksumOf({ a: 1 });
    expect(checksumOfList([{ a: 1 }])).toBe(one);
    const two = checksumOf({ a: 2 });
    expect(checksumOfList([{ a: 1 }, { a: 2 }])).toBe(checksumOf([one, two]));
    expect(checksumOfList([{ a: 2 }, { a: 1 }])).toBe(checksumOfList([{ a: 1 }, { a: 2 }]));
  });
});
