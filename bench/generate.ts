import 'reflect-metadata';
import { once } from 'node:events';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { Client } from 'pg';
import { createDataSource } from '../src/db/data-source';
import type { ConceptDescription, ConceptName } from '../src/db/entities';
import { foldedWords } from '../src/repositories/list';
import { conceptChecksums, mappingChecksums } from '../src/services/shared/checksum';

/**
 * A synthetic CIEL-scale dictionary written straight into a registry database (migrated, e.g. by
 * a server that ran on it once): one org owning a few sources, a main source of tens of thousands
 * of multilingual concepts and hundreds of thousands of mappings. The rows are those the service
 * writes (same display name, folded search text and checksums), loaded set-based, in chunks, in
 * one transaction. Deterministic for a seed and sizes.
 *
 *   node dist/bench/generate.js <DATABASE_URL> [--concepts N] [--other-concepts N]
 *     [--mappings N] [--sources N] [--seed N] [--org ID] [--replace] [--migrate]
 *   node dist/bench/generate.js --jsonl FILE [--concepts N] [--mappings N] [--seed N] [--org ID]
 *     (the dictionary as OCL bulk import JSON lines instead; see `writeJsonLines`)
 *
 * Sizes also come from BENCH_CONCEPTS, BENCH_OTHER_CONCEPTS, BENCH_MAPPINGS and BENCH_SEED.
 */

export const LOCALES = ['en', 'fr', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

export interface GenerateOptions {
  /** The org owning every source; `CIEL-BENCH`. */
  org?: string;
  /** Concepts of the main source (`CIEL`); 60,000. */
  concepts?: number;
  /**
   * Concepts of the largest other source (English only, their own id styles); the others hold
   * 3/5, 3/10 and 1/5 of it, as SNOMED CT, ICD-10, LOINC and RxNorm subsets differ; 20,000.
   */
  otherConcepts?: number;
  /**
   * Mappings over all sources, 60% in the main one, the rest split evenly; 500,000. Per concept
   * they are heavy-tailed (`mappingsPerConcept`), their targets skewed to popular codes.
   */
  mappings?: number;
  /** Sources, the main one included (1–5); 5. */
  sources?: number;
  /** Share of concepts and mappings retired by a second version, in percent; 3. */
  retiredPercent?: number;
  seed?: number;
  /** Concepts per INSERT (mappings: twice as many); 5,000. */
  chunkSize?: number;
  /** Who creates everything; made a plain user if it does not exist; `ocladmin`. */
  username?: string;
  /** Delete an org of the same id (and all it owns) first, instead of failing. */
  replace?: boolean;
  /** Progress lines; none by default. */
  log?: (line: string) => void;
}

/** One name of a generated concept, as the benchmarks use them to build queries. */
export interface GeneratedName {
  name: string;
  locale: Locale;
  preferred: boolean;
  nameType: string | null;
}

/** A concept of the main source, as generated (its current version). */
export interface GeneratedConcept {
  id: string;
  conceptClass: string;
  datatype: string;
  retired: boolean;
  displayName: string;
  names: GeneratedName[];
  /** Active mappings of the main source from this concept (what its detail lists). */
  mappings: number;
}

export interface GeneratedSource {
  id: string;
  repositoryId: string;
  concepts: number;
  activeConcepts: number;
  mappings: number;
  activeMappings: number;
  headSeq: number;
}

export interface GeneratedDictionary {
  org: string;
  username: string;
  /** The main source first. */
  sources: GeneratedSource[];
  /** Every concept of the main source, in id order. */
  concepts: GeneratedConcept[];
  /** Rows inserted: concepts, concept versions, mappings, mapping versions. */
  rows: number;
  /** Loading alone, then ANALYZE, then in all (generation included). */
  loadSeconds: number;
  analyzeSeconds: number;
  totalSeconds: number;
}

/** What a concept version holds before the derived columns are computed. */
export interface ConceptContent {
  id: string;
  conceptClass: string;
  datatype: string;
  externalId: string | null;
  names: ConceptName[];
  descriptions: ConceptDescription[];
  extras: Record<string, unknown> | null;
  retired: boolean;
}

/** The columns the service derives from the content (ConceptService.versionRow). */
export interface DerivedColumns {
  displayName: string | null;
  displayLocale: string | null;
  checksumStandard: string;
  checksumSmart: string;
  searchText: string;
}

interface SourceProfile {
  id: string;
  name: string;
  description: string;
  sourceType: string;
  locales: readonly Locale[];
  /** The concept ids, in order, from a counter and the generator. */
  conceptId: (n: number, random: Random) => string;
  /** Concepts of an other source, as a share of `otherConcepts` (the main source: 1). */
  share: number;
}

const DEFAULTS = {
  org: 'CIEL-BENCH',
  concepts: 60_000,
  otherConcepts: 20_000,
  mappings: 500_000,
  sources: 5,
  retiredPercent: 3,
  seed: 20_251_121,
  chunkSize: 5_000,
  username: 'ocladmin',
  replace: false,
};

const SOURCES: SourceProfile[] = [
  {
    id: 'CIEL',
    name: 'CIEL (synthetic benchmark copy)',
    description: 'Columbia International eHealth Laboratory dictionary, generated for benchmarks',
    sourceType: 'Dictionary',
    locales: LOCALES,
    // CIEL ids are integers with gaps (retired and never-used numbers).
    share: 1,
    conceptId: (n, random) => String(n * 2 + random.int(0, 1)),
  },
  {
    id: 'SNOMED-CT',
    name: 'SNOMED CT (synthetic)',
    description: 'Reference terminology mapped to from CIEL',
    sourceType: 'External',
    locales: ['en'],
    share: 1,
    conceptId: (n, random) => `${100_000 + n * 7 + random.int(0, 6)}00${random.int(1, 9)}`,
  },
  {
    id: 'ICD-10-WHO',
    name: 'ICD-10 (synthetic)',
    description: 'Classification mapped to from CIEL',
    sourceType: 'External',
    locales: ['en'],
    share: 0.6,
    conceptId: (n) =>
      `${String.fromCharCode(65 + (Math.floor(n / 1000) % 26))}${String(Math.floor(n / 10) % 100).padStart(2, '0')}.${n % 10}${n >= 26_000 ? `.${Math.floor(n / 26_000)}` : ''}`,
  },
  {
    id: 'LOINC',
    name: 'LOINC (synthetic)',
    description: 'Laboratory observations mapped to from CIEL',
    sourceType: 'External',
    locales: ['en'],
    share: 0.3,
    conceptId: (n) => `${10_000 + n}-${(n * 7) % 10}`,
  },
  {
    id: 'RxNORM',
    name: 'RxNorm (synthetic)',
    description: 'Clinical drugs mapped to from CIEL',
    sourceType: 'External',
    locales: ['en'],
    share: 0.2,
    conceptId: (n, random) => String(200_000 + n * 3 + random.int(0, 2)),
  },
];

// ---------------------------------------------------------------------------------------------
// Randomness

/** mulberry32: small, fast, good enough, and the same on every machine. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** A key drawn with the given weights. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    let r = this.next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, w] of entries) {
      r -= w;
      if (r < 0) return key;
    }
    return entries[entries.length - 1][0];
  }

  /** A version 4 UUID from this generator (crypto.randomUUID's shape, reproducible). */
  uuid(): string {
    const hex = Array.from({ length: 4 }, () =>
      Math.floor(this.next() * 4294967296)
        .toString(16)
        .padStart(8, '0'),
    ).join('');
    const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary: every term in English, French and Spanish

type Term = readonly [en: string, fr: string, es: string];
type Text = Record<Locale, string>;

const ROOTS: Term[] = [
  ['cardi', 'cardi', 'cardi'],
  ['gastr', 'gastr', 'gastr'],
  ['hepat', 'hépat', 'hepat'],
  ['nephr', 'néphr', 'nefr'],
  ['neur', 'neur', 'neur'],
  ['oste', 'osté', 'oste'],
  ['arthr', 'arthr', 'artr'],
  ['derm', 'derm', 'derm'],
  ['encephal', 'encéphal', 'encefal'],
  ['pneum', 'pneum', 'neum'],
  ['my', 'my', 'mi'],
  ['col', 'col', 'col'],
  ['cyst', 'cyst', 'cist'],
  ['rhin', 'rhin', 'rin'],
  ['ot', 'ot', 'ot'],
  ['ophthalm', 'ophtalm', 'oftalm'],
  ['thyr', 'thyr', 'tir'],
  ['pancreat', 'pancréat', 'pancreat'],
  ['lymphaden', 'lymphadén', 'linfaden'],
  ['splen', 'splén', 'esplen'],
  ['angi', 'angi', 'angi'],
  ['bronch', 'bronch', 'bronc'],
  ['laryng', 'laryng', 'laring'],
  ['pharyng', 'pharyng', 'faring'],
  ['esophag', 'œsophag', 'esofag'],
  ['duoden', 'duodén', 'duoden'],
  ['cholecyst', 'cholécyst', 'colecist'],
  ['mening', 'méning', 'mening'],
  ['myel', 'myél', 'miel'],
  ['phleb', 'phléb', 'fleb'],
  ['retin', 'rétin', 'retin'],
  ['kerat', 'kérat', 'querat'],
  ['glomerul', 'glomérul', 'glomerul'],
  ['pyel', 'pyél', 'piel'],
  ['salping', 'salping', 'salping'],
  ['hyster', 'hystér', 'hister'],
  ['prostat', 'prostat', 'prostat'],
  ['orchi', 'orchi', 'orqui'],
  ['tendin', 'tendin', 'tendin'],
  ['sinus', 'sinus', 'sinus'],
];

const PREFIXES: Term[] = [
  ['hyper', 'hyper', 'hiper'],
  ['hypo', 'hypo', 'hipo'],
  ['peri', 'péri', 'peri'],
  ['endo', 'endo', 'endo'],
  ['poly', 'poly', 'poli'],
  ['pan', 'pan', 'pan'],
  ['para', 'para', 'para'],
  ['dys', 'dys', 'dis'],
  ['micro', 'micro', 'micro'],
  ['neo', 'néo', 'neo'],
];

const DISORDER_SUFFIXES: Term[] = [
  ['itis', 'ite', 'itis'],
  ['osis', 'ose', 'osis'],
  ['opathy', 'opathie', 'opatía'],
  ['oma', 'ome', 'oma'],
  ['algia', 'algie', 'algia'],
  ['omegaly', 'omégalie', 'omegalia'],
  ['orrhea', 'orrhée', 'orrea'],
  ['osclerosis', 'osclérose', 'osclerosis'],
  ['ostenosis', 'osténose', 'ostenosis'],
  ['ocele', 'ocèle', 'ocele'],
  ['oplegia', 'oplégie', 'oplejía'],
  ['odynia', 'odynie', 'odinia'],
  ['omalacia', 'omalacie', 'omalacia'],
];

const PROCEDURE_SUFFIXES: Term[] = [
  ['ectomy', 'ectomie', 'ectomía'],
  ['otomy', 'otomie', 'otomía'],
  ['oscopy', 'oscopie', 'oscopia'],
  ['oplasty', 'oplastie', 'oplastia'],
  ['ostomy', 'ostomie', 'ostomía'],
  ['orrhaphy', 'orraphie', 'orrafia'],
  ['opexy', 'opexie', 'opexia'],
];

const IMAGING_SUFFIXES: Term[] = [
  ['ography', 'ographie', 'ografía'],
  ['ogram', 'ogramme', 'ograma'],
];

const MODIFIERS: Term[] = [
  ['Acute', 'aigu', 'agudo'],
  ['Chronic', 'chronique', 'crónico'],
  ['Severe', 'sévère', 'grave'],
  ['Mild', 'léger', 'leve'],
  ['Subacute', 'subaigu', 'subagudo'],
  ['Congenital', 'congénital', 'congénito'],
  ['Recurrent', 'récurrent', 'recurrente'],
  ['Primary', 'primaire', 'primario'],
  ['Secondary', 'secondaire', 'secundario'],
  ['Malignant', 'malin', 'maligno'],
  ['Benign', 'bénin', 'benigno'],
  ['Bacterial', 'bactérien', 'bacteriano'],
  ['Viral', 'viral', 'viral'],
  ['Idiopathic', 'idiopathique', 'idiopático'],
  ['Traumatic', 'traumatique', 'traumático'],
  ['Hereditary', 'héréditaire', 'hereditario'],
  ['Neonatal', 'néonatal', 'neonatal'],
  ['Postoperative', 'postopératoire', 'postoperatorio'],
  ['Diabetic', 'diabétique', 'diabético'],
  ['Allergic', 'allergique', 'alérgico'],
  ['Ischemic', 'ischémique', 'isquémico'],
  ['Hemorrhagic', 'hémorragique', 'hemorrágico'],
  ['Obstructive', 'obstructif', 'obstructivo'],
  ['Atypical', 'atypique', 'atípico'],
];

/** Body sites: English, then French and Spanish with their preposition ("of the …"). */
const SITES: Term[] = [
  ['knee', 'du genou', 'de rodilla'],
  ['lung', 'du poumon', 'del pulmón'],
  ['liver', 'du foie', 'del hígado'],
  ['heart', 'du cœur', 'del corazón'],
  ['stomach', "de l'estomac", 'del estómago'],
  ['kidney', 'du rein', 'del riñón'],
  ['eye', "de l'œil", 'del ojo'],
  ['ear', "de l'oreille", 'del oído'],
  ['skin', 'de la peau', 'de la piel'],
  ['bone', "de l'os", 'del hueso'],
  ['brain', 'du cerveau', 'del cerebro'],
  ['spine', 'de la colonne vertébrale', 'de la columna vertebral'],
  ['bladder', 'de la vessie', 'de la vejiga'],
  ['throat', 'de la gorge', 'de la garganta'],
  ['hip', 'de la hanche', 'de la cadera'],
  ['shoulder', "de l'épaule", 'del hombro'],
  ['ankle', 'de la cheville', 'del tobillo'],
  ['urethra', "de l'urètre", 'de la uretra'],
  ['thyroid gland', 'de la glande thyroïde', 'de la glándula tiroides'],
  ['pancreas', 'du pancréas', 'del páncreas'],
  ['femur', 'du fémur', 'del fémur'],
  ['lower leg', 'de la jambe', 'de la pierna'],
  ['forearm', "de l'avant-bras", 'del antebrazo'],
  ['cervical spine', 'du rachis cervical', 'de la columna cervical'],
  ['colon', 'du côlon', 'del colon'],
];

const SIDES: Term[] = [
  ['left', 'gauche', 'izquierdo'],
  ['right', 'droit', 'derecho'],
  ['bilateral', 'bilatéral', 'bilateral'],
];

const QUALIFIERS: Term[] = [
  ['with complication', 'avec complication', 'con complicación'],
  ['without complication', 'sans complication', 'sin complicación'],
  ['in pregnancy', 'pendant la grossesse', 'durante el embarazo'],
  ['unspecified', 'non précisé', 'no especificado'],
  ['due to infection', 'due à une infection', 'debido a infección'],
  ['in childhood', "de l'enfance", 'en la infancia'],
  ['with hemorrhage', 'avec hémorragie', 'con hemorragia'],
];

const SYMPTOMS: Term[] = [
  ['Pain', 'Douleur', 'Dolor'],
  ['Swelling', 'Gonflement', 'Hinchazón'],
  ['Bleeding', 'Saignement', 'Sangrado'],
  ['Itching', 'Démangeaison', 'Picazón'],
  ['Numbness', 'Engourdissement', 'Entumecimiento'],
  ['Stiffness', 'Raideur', 'Rigidez'],
  ['Weakness', 'Faiblesse', 'Debilidad'],
  ['Discharge', 'Écoulement', 'Secreción'],
  ['Tenderness', 'Sensibilité', 'Sensibilidad'],
  ['Burning sensation', 'Sensation de brûlure', 'Sensación de ardor'],
  ['Cramp', 'Crampe', 'Calambre'],
  ['Rash', 'Éruption cutanée', 'Erupción cutánea'],
  ['Tremor', 'Tremblement', 'Temblor'],
];

/** Frames around a disorder: `{}` is its name, lower-cased. */
const FINDING_FRAMES: Term[] = [
  ['History of {}', 'Antécédents de {}', 'Antecedentes de {}'],
  ['Family history of {}', 'Antécédents familiaux de {}', 'Antecedentes familiares de {}'],
  ['Suspected {}', '{} suspectée', 'Sospecha de {}'],
  ['{} on examination', "{} à l'examen", '{} en la exploración'],
  ['No {}', 'Absence de {}', 'Ausencia de {}'],
  ['Screening for {}', 'Dépistage de {}', 'Cribado de {}'],
];

const QUESTION_FRAMES: Term[] = [
  ['{} status', 'Statut {}', 'Estado de {}'],
  ['Has the patient had {}?', 'Le patient a-t-il eu {} ?', '¿Ha tenido el paciente {}?'],
  ['Date of {} diagnosis', 'Date du diagnostic de {}', 'Fecha del diagnóstico de {}'],
];

const SET_FRAMES: Term[] = [
  ['{} panel', 'Bilan {}', 'Panel de {}'],
  ['{} management set', 'Ensemble de prise en charge {}', 'Conjunto de manejo de {}'],
];

const MISC_FRAMES: Term[] = [
  ['{} treatment started', 'Début du traitement {}', 'Inicio del tratamiento de {}'],
  ['{} follow-up visit', 'Visite de suivi {}', 'Visita de seguimiento de {}'],
  ['Reason for {} referral', 'Motif de référence {}', 'Motivo de derivación por {}'],
];

const DRUG_SYLLABLES = [
  'lo', 'mi', 'va', 'zo', 'ti', 'ra', 'ce', 'fu', 'pra', 'de', 'xa', 'ni', 'be', 'so', 'clo',
  'ami', 'tri', 'o', 'ke', 'ro', 'me', 'gli', 'pe', 'cu', 'da', 'ne', 'sa', 'tel', 'vo', 'ri',
]; // prettier-ignore

const DRUG_STEMS: Term[] = [
  ['statin', 'statine', 'statina'],
  ['pril', 'pril', 'pril'],
  ['olol', 'olol', 'olol'],
  ['azole', 'azole', 'azol'],
  ['mycin', 'mycine', 'micina'],
  ['cillin', 'cilline', 'cilina'],
  ['sartan', 'sartan', 'sartán'],
  ['prazole', 'prazole', 'prazol'],
  ['vir', 'vir', 'vir'],
  ['mab', 'mab', 'mab'],
  ['tidine', 'tidine', 'tidina'],
  ['dronate', 'dronate', 'dronato'],
  ['floxacin', 'floxacine', 'floxacino'],
  ['caine', 'caïne', 'caína'],
  ['dipine', 'dipine', 'dipino'],
  ['setron', 'sétron', 'setrón'],
  ['gliptin', 'gliptine', 'gliptina'],
  ['parin', 'parine', 'parina'],
];

const DOSE_FORMS: Term[] = [
  ['tablet', 'comprimé', 'comprimido'],
  ['capsule', 'gélule', 'cápsula'],
  ['oral suspension', 'suspension buvable', 'suspensión oral'],
  ['injection', 'solution injectable', 'solución inyectable'],
  ['cream', 'crème', 'crema'],
  ['syrup', 'sirop', 'jarabe'],
  ['eye drops', 'collyre', 'colirio'],
];
const STRENGTHS = ['5', '10', '20', '25', '40', '50', '100', '125', '250', '500', '1000'];
const DOSE_UNITS = ['mg', 'mcg', 'mg/mL', '%'];

const ANALYTES: Term[] = [
  ['Glucose', 'Glucose', 'Glucosa'],
  ['Creatinine', 'Créatinine', 'Creatinina'],
  ['Sodium', 'Sodium', 'Sodio'],
  ['Potassium', 'Potassium', 'Potasio'],
  ['Hemoglobin', 'Hémoglobine', 'Hemoglobina'],
  ['Bilirubin', 'Bilirubine', 'Bilirrubina'],
  ['Albumin', 'Albumine', 'Albúmina'],
  ['Ferritin', 'Ferritine', 'Ferritina'],
  ['Calcium', 'Calcium', 'Calcio'],
  ['Urea', 'Urée', 'Urea'],
  ['Cholesterol', 'Cholestérol', 'Colesterol'],
  ['Triglycerides', 'Triglycérides', 'Triglicéridos'],
  ['Lactate', 'Lactate', 'Lactato'],
  ['Troponin', 'Troponine', 'Troponina'],
  ['Thyrotropin', 'Thyréostimuline', 'Tirotropina'],
  ['Cortisol', 'Cortisol', 'Cortisol'],
  ['Magnesium', 'Magnésium', 'Magnesio'],
  ['Phosphate', 'Phosphate', 'Fosfato'],
  ['Amylase', 'Amylase', 'Amilasa'],
  ['Lipase', 'Lipase', 'Lipasa'],
];
const SPECIMENS: Term[] = [
  ['serum', 'sérique', 'sérico'],
  ['plasma', 'plasmatique', 'plasmático'],
  ['urine', 'urinaire', 'urinario'],
  ['cerebrospinal fluid', 'du liquide céphalorachidien', 'del líquido cefalorraquídeo'],
  ['whole blood', 'sang total', 'sangre total'],
];
const MEASURES: Term[] = [
  ['level', 'Taux de', 'Nivel de'],
  ['concentration', 'Concentration de', 'Concentración de'],
  ['measurement', 'Dosage de', 'Medición de'],
];
const APPROACHES: Term[] = [
  ['Laparoscopic', 'laparoscopique', 'laparoscópica'],
  ['Open', 'ouverte', 'abierta'],
  ['Endoscopic', 'endoscopique', 'endoscópica'],
  ['Partial', 'partielle', 'parcial'],
  ['Total', 'totale', 'total'],
  ['Radical', 'radicale', 'radical'],
  ['Percutaneous', 'percutanée', 'percutánea'],
];

/** Localised semantic tags for the "(disorder)"-style synonyms. */
const TAGS: Record<string, Term> = {
  Diagnosis: ['disorder', 'trouble', 'trastorno'],
  Symptom: ['symptom', 'symptôme', 'síntoma'],
  'Symptom/Finding': ['finding', 'constatation', 'hallazgo'],
  Finding: ['finding', 'constatation', 'hallazgo'],
  Drug: ['product', 'produit', 'producto'],
  Test: ['observable', 'observable', 'observable'],
  Procedure: ['procedure', 'intervention', 'procedimiento'],
  Question: ['question', 'question', 'pregunta'],
  LabSet: ['panel', 'bilan', 'panel'],
  ConvSet: ['set', 'ensemble', 'conjunto'],
  Misc: ['misc', 'divers', 'varios'],
};
const NOS: Text = { en: 'NOS', fr: 'SAI', es: 'SOE' };

const DESCRIPTIONS: Record<Locale, string[]> = {
  en: [
    'A condition characterized by {}.',
    'Recorded when the patient presents with {}.',
    'Clinical concept for {}, as used in patient records.',
  ],
  fr: ['Affection caractérisée par {}.', 'Enregistré lorsque le patient présente {}.'],
  es: ['Afección caracterizada por {}.', 'Se registra cuando el paciente presenta {}.'],
};

const CLASS_WEIGHTS = {
  Diagnosis: 30,
  Finding: 10,
  Symptom: 7,
  'Symptom/Finding': 3,
  Drug: 15,
  Test: 12,
  Procedure: 9,
  Question: 5,
  LabSet: 2,
  ConvSet: 3,
  Misc: 4,
};
type ConceptClass = keyof typeof CLASS_WEIGHTS;

function text(term: Term): Text {
  return { en: term[0], fr: term[1], es: term[2] };
}

function mapText(t: Text, f: (value: string, locale: Locale) => string): Text {
  return { en: f(t.en, 'en'), fr: f(t.fr, 'fr'), es: f(t.es, 'es') };
}

function frame(template: Term, inner: Text): Text {
  return mapText(text(template), (v, l) => capitalize(v.replace('{}', inner[l].toLowerCase())));
}

function capitalize(value: string): string {
  return value.charAt(0).toUpperCase() + value.slice(1);
}

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u', 'é']);

/** root + suffix, eliding the root's last vowel before a vowel (cardi + itis → carditis). */
function join(parts: string[]): string {
  return parts.reduce((word, part) =>
    VOWELS.has(word.charAt(word.length - 1)) && VOWELS.has(part.charAt(0))
      ? word.slice(0, -1) + part
      : word + part,
  );
}

/** A single medical-looking word: [prefix] root suffix, in all three languages. */
function coreTerm(random: Random, suffixes: Term[]): Text {
  const prefix = random.chance(0.35) ? random.pick(PREFIXES) : null;
  const root = random.pick(ROOTS);
  const suffix = random.pick(suffixes);
  return {
    en: join([...(prefix ? [prefix[0]] : []), root[0], suffix[0]]),
    fr: join([...(prefix ? [prefix[1]] : []), root[1], suffix[1]]),
    es: join([...(prefix ? [prefix[2]] : []), root[2], suffix[2]]),
  };
}

/** "of [left] knee" / "du genou [gauche]" / "de rodilla [izquierdo]" */
function siteText(random: Random): Text {
  const site = random.pick(SITES);
  const side = random.chance(0.4) ? random.pick(SIDES) : null;
  return {
    en: side ? `of ${side[0]} ${site[0]}` : `of ${site[0]}`,
    fr: side ? `${site[1]} ${side[1]}` : site[1],
    es: side ? `${site[2]} ${side[2]}` : site[2],
  };
}

function disorder(random: Random): Text {
  const core = coreTerm(random, DISORDER_SUFFIXES);
  const modifier = random.chance(0.6) ? text(random.pick(MODIFIERS)) : null;
  const site = random.chance(0.45) ? siteText(random) : null;
  const qualifier = random.chance(0.15) ? text(random.pick(QUALIFIERS)) : null;
  return mapText(core, (word, l) => {
    const words =
      l === 'en'
        ? [modifier ? `${modifier.en} ${word}` : capitalize(word)]
        : [capitalize(word), ...(modifier ? [modifier[l]] : [])];
    if (site) words.push(site[l]);
    const name = words.join(' ');
    return qualifier ? (l === 'en' ? `${name}, ${qualifier.en}` : `${name} ${qualifier[l]}`) : name;
  });
}

function symptom(random: Random): Text {
  const noun = text(random.pick(SYMPTOMS));
  const site = siteText(random);
  const modifier = random.chance(0.3) ? text(random.pick(MODIFIERS.slice(0, 5))) : null;
  return mapText(noun, (word, l) => {
    const base = `${word} ${site[l]}`;
    if (!modifier) return base;
    return l === 'en' ? `${modifier.en} ${base.toLowerCase()}` : `${base} ${modifier[l]}`;
  });
}

/** Drug names are drawn from a fixed list of invented molecules, so that each has forms. */
function drugNames(random: Random, count: number): Text[] {
  const names = new Map<string, Text>();
  while (names.size < count) {
    const stem = text(random.pick(DRUG_STEMS));
    const base = Array.from({ length: random.int(2, 3) }, () => random.pick(DRUG_SYLLABLES)).join(
      '',
    );
    const molecule = mapText(stem, (s) => capitalize(join([base, s])));
    names.set(molecule.en, molecule);
  }
  return [...names.values()];
}

function drug(random: Random, molecules: Text[]): Text {
  const molecule = random.pick(molecules);
  if (random.chance(0.2)) return molecule;
  const strength = `${random.pick(STRENGTHS)} ${random.pick(DOSE_UNITS)}`;
  const form = text(random.pick(DOSE_FORMS));
  return mapText(molecule, (m, l) => `${m} ${strength} ${form[l]}`);
}

function test(random: Random, molecules: Text[]): Text {
  if (random.chance(0.15)) {
    const core = coreTerm(random, IMAGING_SUFFIXES);
    const site = random.chance(0.6) ? siteText(random) : null;
    return mapText(core, (word, l) => capitalize(site ? `${word} ${site[l]}` : word));
  }
  const analyte = random.chance(0.8)
    ? text(random.pick(ANALYTES))
    : mapText(random.pick(molecules), (m) => m);
  const specimen = text(random.pick(SPECIMENS));
  const measure = text(random.pick(MEASURES));
  return {
    en: `${analyte.en} ${specimen.en} ${measure.en}`,
    fr: `${measure.fr} ${analyte.fr.toLowerCase()} ${specimen.fr}`,
    es: `${measure.es} ${analyte.es.toLowerCase()} ${specimen.es}`,
  };
}

function procedure(random: Random): Text {
  const core = coreTerm(random, PROCEDURE_SUFFIXES);
  const approach = random.chance(0.5) ? text(random.pick(APPROACHES)) : null;
  const site = random.chance(0.35) ? siteText(random) : null;
  return mapText(core, (word, l) => {
    const words =
      l === 'en'
        ? [approach ? `${approach.en} ${word}` : capitalize(word)]
        : [capitalize(word), ...(approach ? [approach[l]] : [])];
    if (site) words.push(site[l]);
    return words.join(' ');
  });
}

/** The fully specified name of a new concept of a class, in every language. */
function conceptText(random: Random, conceptClass: ConceptClass, molecules: Text[]): Text {
  switch (conceptClass) {
    case 'Diagnosis':
      return disorder(random);
    case 'Symptom':
    case 'Symptom/Finding':
      return symptom(random);
    case 'Finding':
      return frame(random.pick(FINDING_FRAMES), disorder(random));
    case 'Drug':
      return drug(random, molecules);
    case 'Test':
      return test(random, molecules);
    case 'Procedure':
      return procedure(random);
    case 'Question':
      return frame(random.pick(QUESTION_FRAMES), disorder(random));
    case 'LabSet':
      return frame(random.pick(SET_FRAMES), text(random.pick(ANALYTES)));
    case 'ConvSet':
      return frame(random.pick(SET_FRAMES), disorder(random));
    case 'Misc':
      return frame(random.pick(MISC_FRAMES), disorder(random));
  }
}

/** Another name for the same thing: inverted, tagged, "NOS", or an abbreviation (SHORT). */
function synonym(
  random: Random,
  fsn: string,
  locale: Locale,
  conceptClass: ConceptClass,
): { name: string; type: string | null } {
  const words = fsn.split(' ');
  const kind = random.weighted({ inverted: 3, tagged: 3, nos: 2, short: 2 });
  if (kind === 'short' && words.length >= 2) {
    const initials = words
      .filter((w) => w.length > 2)
      .map((w) => w.charAt(0).toUpperCase())
      .join('');
    if (initials.length >= 2) return { name: initials, type: 'SHORT' };
  }
  if (kind === 'inverted' && words.length >= 2) {
    return {
      name: `${capitalize(words.slice(1).join(' '))}, ${words[0].toLowerCase()}`,
      type: null,
    };
  }
  if (kind === 'nos') return { name: `${fsn} ${NOS[locale]}`, type: null };
  const tag = text(TAGS[conceptClass]);
  return { name: `${fsn} (${tag[locale]})`, type: null };
}

/** Datatypes by class and weight; the classes not listed are N/A. */
const DATATYPES: Partial<Record<ConceptClass, Record<string, number>>> = {
  Test: { Numeric: 60, Coded: 25, Text: 15 },
  Finding: { 'N/A': 60, Coded: 25, Boolean: 15 },
  'Symptom/Finding': { 'N/A': 60, Coded: 25, Boolean: 15 },
  Question: { Coded: 70, Text: 20, Date: 10 },
  Misc: { 'N/A': 40, Text: 30, Date: 20, Numeric: 10 },
};

function datatypeOf(random: Random, conceptClass: ConceptClass): string {
  const weights = DATATYPES[conceptClass];
  return weights ? random.weighted(weights) : 'N/A';
}

function extrasOf(
  random: Random,
  conceptClass: ConceptClass,
  datatype: string,
): Record<string, unknown> | null {
  if (conceptClass === 'Drug' && random.chance(0.4)) return { is_set: false, units: 'mg' };
  if (datatype === 'Numeric') {
    const low = random.int(1, 50);
    return {
      is_set: false,
      units: random.pick(['mg/dL', 'mmol/L', 'g/L', '%', 'U/L', 'µmol/L']),
      low_normal: low,
      hi_normal: low + random.int(5, 100) + 0.5,
    };
  }
  if (conceptClass === 'LabSet' || conceptClass === 'ConvSet') return { is_set: true };
  return random.chance(0.05) ? { is_set: false } : null;
}

/** The content of one concept, as the API would hold it after a create. */
function generateConcept(
  random: Random,
  profile: SourceProfile,
  id: string,
  molecules: Text[],
): ConceptContent {
  const conceptClass = random.weighted(CLASS_WEIGHTS);
  const fsn = conceptText(random, conceptClass, molecules);
  const locales: Locale[] =
    profile.locales.length === 1
      ? [profile.locales[0]]
      : random.chance(0.5)
        ? ['en', 'fr', 'es']
        : ['en', random.chance(0.5) ? 'fr' : 'es'];
  const total = Math.max(locales.length, random.int(3, 5));
  const names: ConceptName[] = [];
  const used = new Set<string>();
  // Grouped by locale, each locale's fully specified preferred name first (English first).
  const extra = Array.from({ length: total - locales.length }, () =>
    random.chance(0.6) ? 'en' : random.pick(locales),
  );
  for (const locale of locales) {
    names.push(nameOf(random, fsn[locale], locale, true, 'FULLY_SPECIFIED'));
    used.add(fsn[locale]);
    const synonyms = extra.filter((l) => l === locale).length;
    for (let i = 0; i < synonyms; i += 1) {
      const alt = synonym(random, fsn[locale], locale, conceptClass);
      if (used.has(alt.name)) continue;
      used.add(alt.name);
      names.push(nameOf(random, alt.name, locale, false, alt.type));
    }
  }
  const descriptions: ConceptDescription[] = [];
  const describe = (locale: Locale, preferred: boolean): void => {
    const template = random.pick(DESCRIPTIONS[locale]);
    descriptions.push({
      uuid: random.uuid(),
      description: template.replace('{}', fsn[locale].toLowerCase()),
      locale,
      locale_preferred: preferred,
      description_type: 'Definition',
      external_id: null,
    });
  };
  describe('en', true);
  if (random.chance(0.4))
    describe(locales.length > 1 ? random.pick(locales.slice(1)) : 'en', false);
  const datatype = datatypeOf(random, conceptClass);
  return {
    id,
    conceptClass,
    datatype,
    externalId: profile.id === 'CIEL' ? id.padEnd(36, 'A') : null,
    names,
    descriptions,
    extras: extrasOf(random, conceptClass, datatype),
    retired: false,
  };
}

function nameOf(
  random: Random,
  name: string,
  locale: Locale,
  preferred: boolean,
  nameType: string | null,
): ConceptName {
  return {
    uuid: random.uuid(),
    name,
    locale,
    locale_preferred: preferred,
    name_type: nameType,
    external_id: random.uuid(),
  };
}

// ---------------------------------------------------------------------------------------------
// The columns the service derives

/**
 * The display name, checksums and search text of a version, computed as ConceptService's
 * `versionRow` computes them (its `displayNameOf` is private, so it is repeated here; the
 * concept-search benchmark checks the result against rows the API wrote).
 */
export function derivedColumns(content: ConceptContent, defaultLocale: string): DerivedColumns {
  const checksums = conceptChecksums({
    concept_class: content.conceptClass,
    datatype: content.datatype,
    retired: content.retired,
    external_id: content.externalId,
    extras: content.extras,
    names: content.names.map(({ uuid: _uuid, ...name }) => name),
    descriptions: content.descriptions.map(({ uuid: _uuid, ...description }) => description),
  });
  const display =
    content.names.find((n) => n.locale_preferred && n.locale === defaultLocale) ??
    content.names.find((n) => n.locale_preferred) ??
    content.names[0];
  return {
    displayName: display?.name ?? null,
    displayLocale: display?.locale ?? null,
    checksumStandard: checksums.standard,
    checksumSmart: checksums.smart,
    searchText: foldedWords(
      [
        content.id,
        ...content.names.map((n) => n.name),
        ...content.descriptions.map((d) => d.description),
      ].join(' '),
    ).join(' '),
  };
}

/** What a mapping version holds, both ends given inside the service (concept URLs). */
export interface MappingContent {
  id: string;
  mapType: string;
  from: { sourceUrl: string; code: string };
  to: { sourceUrl: string; code: string };
  sortWeight: number | null;
  externalId: string | null;
  retired: boolean;
}

/** The checksums and search text of a mapping version, as MappingService's `versionRow`. */
export function mappingDerivedColumns(content: MappingContent): {
  checksumStandard: string;
  checksumSmart: string;
  searchText: string;
} {
  const checksums = mappingChecksums({
    map_type: content.mapType,
    from_concept_code: content.from.code,
    from_concept_name: null,
    from_source_url: content.from.sourceUrl,
    from_source_version: null,
    to_concept_code: content.to.code,
    to_concept_name: null,
    to_source_url: content.to.sourceUrl,
    to_source_version: null,
    retired: content.retired,
    sort_weight: content.sortWeight,
    extras: null,
    external_id: content.externalId,
  });
  return {
    checksumStandard: checksums.standard,
    checksumSmart: checksums.smart,
    searchText: foldedWords(
      [content.id, content.mapType, content.from.code, content.to.code].join(' '),
    ).join(' '),
  };
}

/** The first concepts of the main source for a seed, without a database (for API checks). */
export function sampleConcepts(count: number, seed = DEFAULTS.seed): ConceptContent[] {
  const random = new Random(seed);
  const molecules = drugNames(new Random(seed ^ 0x5eed), 800);
  const profile = SOURCES[0];
  return Array.from({ length: count }, (_, n) =>
    generateConcept(random, profile, profile.conceptId(n + 1, random), molecules),
  );
}

// ---------------------------------------------------------------------------------------------
// Loading

const INSERT_CONCEPTS = `
  WITH c AS (
    INSERT INTO concepts (repository_id, mnemonic, created_by)
    SELECT $1, m, $2 FROM unnest($3::text[]) AS m
    RETURNING id, mnemonic)
  INSERT INTO concept_versions (concept_id, repository_id, mnemonic, valid_from_seq, valid_to_seq,
    retired, concept_class, datatype, external_id, names, descriptions, extras, display_name,
    display_locale, checksum_standard, checksum_smart, update_comment, search_text, created_by)
  SELECT c.id, $1, v.mnemonic, v.valid_from_seq, v.valid_to_seq, v.retired, v.concept_class,
    v.datatype, v.external_id, v.names::jsonb, v.descriptions::jsonb, v.extras::jsonb,
    v.display_name, v.display_locale, v.checksum_standard, v.checksum_smart, v.update_comment,
    v.search_text, $2
  FROM unnest($4::text[], $5::bigint[], $6::bigint[], $7::boolean[], $8::text[], $9::text[],
    $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[],
    $17::text[], $18::text[], $19::text[])
    WITH ORDINALITY AS v (mnemonic, valid_from_seq, valid_to_seq, retired, concept_class,
      datatype, external_id, names, descriptions, extras, display_name, display_locale,
      checksum_standard, checksum_smart, update_comment, search_text, ord)
  JOIN c USING (mnemonic)
  ORDER BY v.ord`;

/**
 * Mappings with both ends given as concept URLs inside the service, as MappingService.create
 * stores them: each end's source URL and code, its repository, and its concept when the code
 * exists there (resolved here by the same lookup: repository and mnemonic). No end names, source
 * versions or extras are sent.
 */
const INSERT_MAPPINGS = `
  WITH m AS (
    INSERT INTO mappings (repository_id, mnemonic, created_by)
    SELECT $1, x, $2 FROM unnest($3::text[]) AS x
    RETURNING id, mnemonic)
  INSERT INTO mapping_versions (mapping_id, repository_id, mnemonic, valid_from_seq, valid_to_seq,
    retired, map_type, from_source_url, from_concept_code, from_repository_id, from_concept_id,
    to_source_url, to_concept_code, to_repository_id, to_concept_id, sort_weight, external_id,
    checksum_standard, checksum_smart, update_comment, search_text, created_by)
  SELECT m.id, $1, v.mnemonic, v.valid_from_seq, v.valid_to_seq, v.retired, v.map_type,
    v.from_source_url, v.from_code, v.from_repository_id, fc.id, v.to_source_url, v.to_code,
    v.to_repository_id, tc.id, v.sort_weight, v.external_id, v.checksum_standard,
    v.checksum_smart, v.update_comment, v.search_text, $2
  FROM unnest($4::text[], $5::bigint[], $6::bigint[], $7::boolean[], $8::text[], $9::text[],
    $10::text[], $11::bigint[], $12::text[], $13::text[], $14::bigint[], $15::float8[],
    $16::text[], $17::text[], $18::text[], $19::text[], $20::text[])
    WITH ORDINALITY AS v (mnemonic, valid_from_seq, valid_to_seq, retired, map_type,
      from_source_url, from_code, from_repository_id, to_source_url, to_code, to_repository_id,
      sort_weight, external_id, checksum_standard, checksum_smart, update_comment, search_text,
      ord)
  JOIN m USING (mnemonic)
  LEFT JOIN concepts fc ON fc.repository_id = v.from_repository_id AND fc.mnemonic = v.from_code
  LEFT JOIN concepts tc ON tc.repository_id = v.to_repository_id AND tc.mnemonic = v.to_code
  ORDER BY v.ord`;

/** Columns of INSERT_CONCEPTS' unnest, one array each. */
class ConceptVersionColumns {
  readonly mnemonic: string[] = [];
  readonly validFrom: number[] = [];
  readonly validTo: Array<number | null> = [];
  readonly retired: boolean[] = [];
  readonly conceptClass: string[] = [];
  readonly datatype: string[] = [];
  readonly externalId: Array<string | null> = [];
  readonly names: string[] = [];
  readonly descriptions: string[] = [];
  readonly extras: Array<string | null> = [];
  readonly displayName: Array<string | null> = [];
  readonly displayLocale: Array<string | null> = [];
  readonly checksumStandard: string[] = [];
  readonly checksumSmart: string[] = [];
  readonly updateComment: Array<string | null> = [];
  readonly searchText: string[] = [];

  push(
    content: ConceptContent,
    derived: DerivedColumns,
    validFrom: number,
    validTo: number | null,
    comment: string | null,
  ): void {
    this.mnemonic.push(content.id);
    this.validFrom.push(validFrom);
    this.validTo.push(validTo);
    this.retired.push(content.retired);
    this.conceptClass.push(content.conceptClass);
    this.datatype.push(content.datatype);
    this.externalId.push(content.externalId);
    this.names.push(JSON.stringify(content.names));
    this.descriptions.push(JSON.stringify(content.descriptions));
    this.extras.push(content.extras === null ? null : JSON.stringify(content.extras));
    this.displayName.push(derived.displayName);
    this.displayLocale.push(derived.displayLocale);
    this.checksumStandard.push(derived.checksumStandard);
    this.checksumSmart.push(derived.checksumSmart);
    this.updateComment.push(comment);
    this.searchText.push(derived.searchText);
  }

  get length(): number {
    return this.mnemonic.length;
  }

  parameters(repositoryId: string, username: string, conceptIds: string[]): unknown[] {
    return [
      repositoryId,
      username,
      conceptIds,
      this.mnemonic,
      this.validFrom,
      this.validTo,
      this.retired,
      this.conceptClass,
      this.datatype,
      this.externalId,
      this.names,
      this.descriptions,
      this.extras,
      this.displayName,
      this.displayLocale,
      this.checksumStandard,
      this.checksumSmart,
      this.updateComment,
      this.searchText,
    ];
  }
}

/** Keeps one statement in flight while the next chunk is generated. */
class Pipeline {
  private pending: Promise<unknown> | null = null;
  /** Time spent waiting for the database rather than generating. */
  waitMs = 0;

  constructor(private readonly client: Client) {}

  async send(sql: string, parameters: unknown[]): Promise<void> {
    await this.flush();
    const pending = this.client.query(sql, parameters);
    pending.catch(() => undefined); // awaited in flush; no unhandled rejection meanwhile
    this.pending = pending;
  }

  async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = null;
    if (!pending) return;
    const started = performance.now();
    await pending;
    this.waitMs += performance.now() - started;
  }
}

/**
 * Writes the dictionary into a migrated registry database and ANALYZEs it; fails when the org
 * exists unless `replace`. Returns what was written, the main source's concepts included.
 */
export async function generateDictionary(
  databaseUrl: string,
  options: GenerateOptions = {},
): Promise<GeneratedDictionary> {
  const o = { ...DEFAULTS, ...stripUndefined(options) };
  const log = options.log ?? ((): void => undefined);
  if (o.sources < 1 || o.sources > SOURCES.length)
    throw new Error(`sources must be between 1 and ${SOURCES.length}.`);
  const started = performance.now();
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: migrated } = await client.query<{ ok: boolean }>(
      `SELECT to_regclass('concept_versions') IS NOT NULL
          AND EXISTS (SELECT 1 FROM information_schema.columns
                      WHERE table_name = 'concept_versions' AND column_name = 'search_text')
          AND EXISTS (SELECT 1 FROM information_schema.columns
                      WHERE table_name = 'mapping_versions' AND column_name = 'map_type') AS ok`,
    );
    if (!migrated[0].ok)
      throw new Error(
        'The database is not migrated: start the registry on it once (or --migrate).',
      );

    await client.query('BEGIN');
    let rows = 0;
    let loadSeconds = 0;
    const sources: GeneratedSource[] = [];
    let concepts: GeneratedConcept[] = [];
    try {
      const loadStarted = performance.now();
      const { orgId } = await createOwner(client, o.org, o.username, o.replace, log);
      const profiles = SOURCES.slice(0, o.sources);
      const molecules = drugNames(new Random(o.seed ^ 0x5eed), 800);
      const sourceUrl = (profile: SourceProfile): string =>
        `/orgs/${encodeURIComponent(o.org)}/sources/${encodeURIComponent(profile.id)}/`;
      // Every source first, then every source's concepts, then the mappings between them.
      const targets: MappingTarget[] = [];
      for (const profile of profiles) {
        const repositoryId = await createSource(client, orgId, profile, o.username);
        targets.push({ profile, repositoryId, url: sourceUrl(profile), ids: [] });
      }
      const random = targets.map((_, index) => new Random(o.seed + index * 7919));
      const loadedConcepts: Array<{ retired: number; headSeq: number }> = [];
      for (const [index, target] of targets.entries()) {
        const conceptCount =
          index === 0 ? o.concepts : Math.round(o.otherConcepts * target.profile.share);
        const conceptStarted = performance.now();
        const loaded = await loadConcepts(client, {
          repositoryId: target.repositoryId,
          profile: target.profile,
          count: conceptCount,
          random: random[index],
          retireRandom: new Random(o.seed ^ (0x7e71 + index)),
          molecules,
          retiredPercent: o.retiredPercent,
          chunkSize: o.chunkSize,
          username: o.username,
          keep: index === 0,
        });
        const seconds = (performance.now() - conceptStarted) / 1000;
        target.ids = loaded.ids;
        if (index === 0) concepts = loaded.concepts;
        loadedConcepts.push(loaded);
        rows += loaded.rows;
        log(
          `  ${target.profile.id.padEnd(10)} ${count(conceptCount)} concepts: ` +
            `${count(loaded.rows)} rows in ${seconds.toFixed(1)} s ` +
            `(${rate(loaded.rows, seconds)} rows/s, ${loaded.waitSeconds.toFixed(1)} s of it ` +
            `waiting on the database)`,
        );
      }
      const mainShare = targets.length === 1 ? o.mappings : Math.round(o.mappings * 0.6);
      const perConcept = new Map<string, number>();
      for (const [index, target] of targets.entries()) {
        const others = targets.length - 1;
        const mappingCount =
          index === 0
            ? mainShare
            : Math.floor((o.mappings - mainShare) / others) +
              (index <= (o.mappings - mainShare) % others ? 1 : 0);
        if (mappingCount > 0 && target.ids.length === 0)
          throw new Error(`${target.profile.id} has mappings to place but no concepts.`);
        const mappingStarted = performance.now();
        const mapped = await loadMappings(client, {
          source: target,
          targets,
          count: mappingCount,
          firstSeq: loadedConcepts[index].headSeq + 1,
          random: random[index],
          retiredPercent: o.retiredPercent,
          chunkSize: o.chunkSize * 2,
          username: o.username,
          perConcept: index === 0 ? perConcept : undefined,
        });
        const seconds = (performance.now() - mappingStarted) / 1000;
        await client.query('UPDATE repositories SET head_seq = $2 WHERE id = $1', [
          target.repositoryId,
          mapped.headSeq,
        ]);
        rows += mapped.rows;
        const conceptCount = target.ids.length;
        sources.push({
          id: target.profile.id,
          repositoryId: target.repositoryId,
          concepts: conceptCount,
          activeConcepts: conceptCount - loadedConcepts[index].retired,
          mappings: mappingCount,
          activeMappings: mappingCount - mapped.retired,
          headSeq: mapped.headSeq,
        });
        log(
          `  ${target.profile.id.padEnd(10)} ${count(mappingCount)} mappings: ` +
            `${count(mapped.rows)} rows in ${seconds.toFixed(1)} s ` +
            `(${rate(mapped.rows, seconds)} rows/s, ${mapped.waitSeconds.toFixed(1)} s of it ` +
            `waiting on the database); head_seq ${mapped.headSeq}`,
        );
      }
      for (const concept of concepts) concept.mappings = perConcept.get(concept.id) ?? 0;
      log(`  ${profiles[0].id.padEnd(10)} ${mappingSpread(concepts.map((c) => c.mappings))}`);
      await client.query('COMMIT');
      loadSeconds = (performance.now() - loadStarted) / 1000;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }

    // Statistics for the planner; VACUUM also flushes the trigram index's pending list and sets
    // the visibility map, as autovacuum would soon after a real import.
    const analyzeStarted = performance.now();
    await client.query(
      'VACUUM (ANALYZE) repositories, concepts, concept_versions, mappings, mapping_versions',
    );
    const analyzeSeconds = (performance.now() - analyzeStarted) / 1000;
    const totalSeconds = (performance.now() - started) / 1000;
    log(
      `  ${count(rows)} rows in ${loadSeconds.toFixed(1)} s (${rate(rows, loadSeconds)} rows/s, ` +
        `generation included), VACUUM ANALYZE ${analyzeSeconds.toFixed(1)} s, ` +
        `total ${totalSeconds.toFixed(1)} s`,
    );
    return {
      org: o.org,
      username: o.username,
      sources,
      concepts,
      rows,
      loadSeconds,
      analyzeSeconds,
      totalSeconds,
    };
  } finally {
    await client.end();
  }
}

/** The org (and, if missing, the user creating everything), as the API writes them. */
async function createOwner(
  client: Client,
  org: string,
  username: string,
  replace: boolean,
  log: (line: string) => void,
): Promise<{ orgId: string }> {
  const existing = await client.query<{ id: string }>(
    'SELECT id::text AS id FROM organizations WHERE lower(mnemonic) = lower($1)',
    [org],
  );
  if (existing.rows.length > 0) {
    if (!replace) throw new Error(`The org '${org}' exists; pass replace (--replace) to redo it.`);
    const deleteStarted = performance.now();
    await deleteOrg(client, existing.rows[0].id);
    log(`  deleted the existing '${org}' in ${secondsSince(deleteStarted)} s`);
  }
  let user = await client.query<{ id: string }>(
    'SELECT id::text AS id FROM users WHERE lower(username) = lower($1)',
    [username],
  );
  if (user.rows.length === 0) {
    user = await client.query<{ id: string }>(
      `INSERT INTO users (username, name, email, created_by, updated_by)
       VALUES ($1, 'Benchmark loader', $2, $1, $1) RETURNING id::text AS id`,
      [username, `${username}@example.org`],
    );
  }
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO organizations (mnemonic, name, company, website, public_access, created_by, updated_by)
     VALUES ($1, 'CIEL (synthetic benchmark dictionary)', 'Benchmark', 'https://example.org/ciel',
             'View', $2, $2)
     RETURNING id::text AS id`,
    [org, username],
  );
  await client.query(
    `INSERT INTO org_memberships (org_id, user_id, role) VALUES ($1, $2, 'admin')`,
    [rows[0].id, user.rows[0].id],
  );
  return { orgId: rows[0].id };
}

/**
 * Deletes an org and all it owns. The cascades from concepts and mappings to their versions
 * look the versions up by concept_id / mapping_id, which only a partial index (current rows)
 * covers: one sequential scan of the versions per deleted concept, hours at this scale. So the
 * content goes first, set-based by repository, with the per-row foreign-key triggers off — when
 * allowed (superuser) and when nothing but the version tables references the content tables;
 * links from other orgs' mappings are cleared first, as their ON DELETE SET NULL would.
 */
async function deleteOrg(client: Client, orgId: string): Promise<void> {
  const { rows } = await client.query<{ fast: boolean }>(
    `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
        AND NOT EXISTS (
          SELECT 1 FROM pg_constraint
          WHERE contype = 'f'
            AND confrelid IN ('concepts'::regclass, 'mappings'::regclass,
                              'concept_versions'::regclass, 'mapping_versions'::regclass)
            AND conrelid NOT IN ('concept_versions'::regclass, 'mapping_versions'::regclass)
        ) AS fast`,
  );
  if (rows[0].fast) {
    const repos = 'SELECT id FROM repositories WHERE owner_org_id = $1';
    // Mappings elsewhere that point at these concepts lose the link (their ON DELETE SET NULL).
    for (const side of ['from', 'to']) {
      await client.query(
        `UPDATE mapping_versions SET ${side}_concept_id = NULL
         WHERE ${side}_concept_id IN (SELECT id FROM concepts WHERE repository_id IN (${repos}))
           AND repository_id NOT IN (${repos})`,
        [orgId],
      );
    }
    await client.query('SET LOCAL session_replication_role = replica');
    for (const table of ['concept_versions', 'mapping_versions', 'concepts', 'mappings']) {
      await client.query(`DELETE FROM ${table} WHERE repository_id IN (${repos})`, [orgId]);
    }
    await client.query('SET LOCAL session_replication_role = origin');
  }
  await client.query('DELETE FROM organizations WHERE id = $1', [orgId]);
}

/** A source with its HEAD version row (RepoRepository.insert). */
async function createSource(
  client: Client,
  orgId: string,
  profile: SourceProfile,
  username: string,
): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO repositories (kind, owner_org_id, mnemonic, name, full_name, description,
       public_access, default_locale, supported_locales, source_type, settings, created_by,
       updated_by)
     VALUES ('source', $1, $2, $3, $3, $4, 'View', 'en', $5, $6, '{}'::jsonb, $7, $7)
     RETURNING id::text AS id`,
    [
      orgId,
      profile.id,
      profile.name,
      profile.description,
      [...profile.locales],
      profile.sourceType,
      username,
    ],
  );
  await client.query(
    `INSERT INTO repository_versions (repository_id, mnemonic, seq, created_by, updated_by)
     VALUES ($1, 'HEAD', NULL, $2, $2)`,
    [rows[0].id, username],
  );
  return rows[0].id;
}

interface ConceptLoad {
  repositoryId: string;
  profile: SourceProfile;
  count: number;
  /** Content; the retired concepts are drawn from their own generator. */
  random: Random;
  retireRandom: Random;
  molecules: Text[];
  retiredPercent: number;
  chunkSize: number;
  username: string;
  /** Return the generated concepts (the main source's). */
  keep: boolean;
}

/**
 * Concept n (from 1) is created at change n, as one create per change would; the retired ones
 * are retired afterwards in order (changes count+1, count+2, …): their first version ends there
 * and a retired copy begins, as DELETE …/concepts/:id/ does.
 */
async function loadConcepts(
  client: Client,
  load: ConceptLoad,
): Promise<{
  rows: number;
  retired: number;
  headSeq: number;
  concepts: GeneratedConcept[];
  ids: string[];
  waitSeconds: number;
}> {
  const retired = Array.from({ length: load.count }, () =>
    load.retireRandom.chance(load.retiredPercent / 100),
  );
  const retiredCount = retired.filter(Boolean).length;
  const pipeline = new Pipeline(client);
  const concepts: GeneratedConcept[] = [];
  const allIds: string[] = [];
  let rows = 0;
  let retiredSoFar = 0;
  for (let start = 0; start < load.count; start += load.chunkSize) {
    const end = Math.min(load.count, start + load.chunkSize);
    const ids: string[] = [];
    const columns = new ConceptVersionColumns();
    for (let n = start; n < end; n += 1) {
      // Lets the socket send the statement in flight while this chunk is generated.
      if (n % 250 === 0) await setImmediate();
      const id = load.profile.conceptId(n + 1, load.random);
      const content = generateConcept(load.random, load.profile, id, load.molecules);
      const first = derivedColumns(content, 'en');
      ids.push(id);
      let current = content;
      if (retired[n]) {
        retiredSoFar += 1;
        const retireSeq = load.count + retiredSoFar;
        columns.push(content, first, n + 1, retireSeq, null);
        current = { ...content, retired: true };
        columns.push(
          current,
          derivedColumns(current, 'en'),
          retireSeq,
          null,
          'Concept was retired',
        );
      } else {
        columns.push(content, first, n + 1, null, null);
      }
      if (load.keep) {
        concepts.push({
          id,
          conceptClass: content.conceptClass,
          datatype: content.datatype,
          retired: current.retired,
          displayName: first.displayName ?? '',
          mappings: 0,
          names: content.names.map((name) => ({
            name: name.name,
            locale: name.locale as Locale,
            preferred: name.locale_preferred,
            nameType: name.name_type,
          })),
        });
      }
    }
    rows += ids.length + columns.length;
    allIds.push(...ids);
    await pipeline.send(INSERT_CONCEPTS, columns.parameters(load.repositoryId, load.username, ids));
  }
  await pipeline.flush();
  return {
    rows,
    retired: retiredCount,
    headSeq: load.count + retiredCount,
    concepts,
    ids: allIds,
    waitSeconds: pipeline.waitMs / 1000,
  };
}

/** A source as mapping ends see it. */
interface MappingTarget {
  profile: SourceProfile;
  repositoryId: string;
  /** `/orgs/:org/sources/:source/`, as MappingService stores a resolved end's source. */
  url: string;
  /** Its concept ids, in order. */
  ids: string[];
}

interface MappingLoad {
  source: MappingTarget;
  /** Every source, the main one first. */
  targets: MappingTarget[];
  count: number;
  firstSeq: number;
  random: Random;
  retiredPercent: number;
  chunkSize: number;
  username: string;
  /** Active mappings per concept id of this source, counted when given. */
  perConcept?: Map<string, number>;
}

/** Map types of the main source and where they point; the others map back or within. */
const MAIN_MAP_TYPES = {
  'SAME-AS': 45,
  'NARROWER-THAN': 12,
  'BROADER-THAN': 5,
  'Q-AND-A': 23,
  'CONCEPT-SET': 15,
};
const OTHER_MAP_TYPES = { 'SAME-AS': 60, 'BROADER-THAN': 20, 'NARROWER-THAN': 20 };
/** Of the ends pointing to another source, the share whose code exists there. */
const RESOLVED_SHARE = 0.6;

/**
 * Mappings numbered from 1 (the sequential default), created at consecutive changes after the
 * concepts, some retired afterwards. From a random concept of the source: in the main source,
 * SAME-AS / NARROWER-THAN / BROADER-THAN to another source (a code that exists there or not),
 * Q-AND-A and CONCEPT-SET to another main concept with a sort weight; in the others, SAME-AS to
 * a main concept or a broader/narrower one of their own. No two active mappings of a source
 * share map type and ends (the service refuses those).
 */
async function loadMappings(
  client: Client,
  load: MappingLoad,
): Promise<{ rows: number; retired: number; headSeq: number; waitSeconds: number }> {
  const { source, targets, random } = load;
  const main = targets[0];
  const others = targets.slice(1);
  const isMain = source === main;
  const retired = Array.from({ length: load.count }, () =>
    random.chance(load.retiredPercent / 100),
  );
  const retiredCount = retired.filter(Boolean).length;
  // Who maps from where: each concept starts its heavy-tailed share, in a shuffled order.
  const plan = shuffled(
    mappingsPerConcept(source.ids.length, load.count, random).flatMap((n, i) =>
      Array<string>(n).fill(source.ids[i]),
    ),
    random,
  );
  const seen = new Set<string>();
  const pipeline = new Pipeline(client);
  let rows = 0;
  let retiredSoFar = 0;
  for (let start = 0; start < load.count; start += load.chunkSize) {
    const end = Math.min(load.count, start + load.chunkSize);
    const ids: string[] = [];
    const columns = new MappingVersionColumns();
    for (let n = start; n < end; n += 1) {
      if (n % 1000 === 0) await setImmediate();
      let content: MappingContent;
      do {
        const mapType: string = random.weighted<string>(isMain ? MAIN_MAP_TYPES : OTHER_MAP_TYPES);
        const internal =
          mapType === 'Q-AND-A' || mapType === 'CONCEPT-SET' || (isMain && others.length === 0);
        const target = internal
          ? main
          : isMain
            ? random.pick(others)
            : mapType === 'SAME-AS'
              ? main
              : source;
        const toCode =
          target === source || target === main || random.chance(RESOLVED_SHARE)
            ? popular(target, random)
            : target.profile.conceptId(
                target.ids.length + random.int(1, 10 * target.ids.length),
                random,
              );
        content = {
          id: String(n + 1),
          mapType,
          from: { sourceUrl: source.url, code: plan[n] },
          to: { sourceUrl: target.url, code: toCode },
          sortWeight: internal ? random.int(1, 20) : null,
          externalId: isMain && random.chance(0.5) ? random.uuid() : null,
          retired: false,
        };
      } while (!unique(seen, content));
      const toRepository = targets.find((t) => t.url === content.to.sourceUrl)!.repositoryId;
      ids.push(content.id);
      const validFrom = load.firstSeq + n;
      if (retired[n]) {
        retiredSoFar += 1;
        const retireSeq = load.firstSeq + load.count - 1 + retiredSoFar;
        columns.push(content, source.repositoryId, toRepository, validFrom, retireSeq, null);
        const ended = { ...content, retired: true };
        columns.push(
          ended,
          source.repositoryId,
          toRepository,
          retireSeq,
          null,
          'Mapping was retired',
        );
      } else {
        columns.push(content, source.repositoryId, toRepository, validFrom, null, null);
        const from = content.from.code;
        load.perConcept?.set(from, (load.perConcept.get(from) ?? 0) + 1);
      }
    }
    rows += ids.length + columns.length;
    await pipeline.send(
      INSERT_MAPPINGS,
      columns.parameters(source.repositoryId, load.username, ids),
    );
  }
  await pipeline.flush();
  return {
    rows,
    retired: retiredCount,
    headSeq: load.firstSeq - 1 + load.count + retiredCount,
    waitSeconds: pipeline.waitMs / 1000,
  };
}

/**
 * How many mappings each of `concepts` concepts starts, adding up to `total`, heavy-tailed as in
 * real dictionaries: about a third start none, most a few, a few dozens and a handful hundreds.
 * A Pareto draw (alpha 1.1, at most 400) for the others, scaled to the total with random rounding.
 */
export function mappingsPerConcept(concepts: number, total: number, random: Random): number[] {
  if (concepts === 0) return [];
  const raw = Array.from({ length: concepts }, () =>
    random.chance(0.35) ? 0 : Math.min(400, Math.floor(1 / Math.pow(1 - random.next(), 1 / 1.1))),
  );
  const sum = raw.reduce((a, b) => a + b, 0) || 1;
  const counts = raw.map((n) => Math.floor((n * total) / sum + random.next()));
  // Rounding leaves the sum a little off: settle the difference on concepts that map already.
  let diff = total - counts.reduce((a, b) => a + b, 0);
  while (diff !== 0) {
    const i = random.int(0, concepts - 1);
    if (raw[i] === 0 && total > 0) continue;
    if (diff > 0) {
      counts[i] += 1;
      diff -= 1;
    } else if (counts[i] > 0) {
      counts[i] -= 1;
      diff += 1;
    }
  }
  return counts;
}

/** How mapping counts per concept spread: the share of concepts in each band, and the most. */
export function mappingSpread(counts: number[]): string {
  const bands: Array<[string, (n: number) => boolean]> = [
    ['0', (n) => n === 0],
    ['1–5', (n) => n >= 1 && n <= 5],
    ['6–19', (n) => n >= 6 && n <= 19],
    ['20–49', (n) => n >= 20 && n <= 49],
    ['50+', (n) => n >= 50],
  ];
  const share = (test: (n: number) => boolean): string =>
    `${((100 * counts.filter(test).length) / Math.max(1, counts.length)).toFixed(1)}%`;
  const most = counts.reduce((a, b) => Math.max(a, b), 0);
  return `active mappings per concept: ${bands.map(([name, test]) => `${name}: ${share(test)}`).join(', ')}; most ${most}`;
}

/** The items in a random order (Fisher–Yates), from the generator. */
function shuffled<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = random.int(0, i);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** Popularity ranks of each source's codes: a fixed random order per source. */
const popularity = new WeakMap<MappingTarget, string[]>();

/**
 * A code of the target, skewed to popular ones as mapping targets are: the code at rank r is
 * drawn about r^-0.75 as often, so a few codes are targets of many mappings and most of few or none.
 */
function popular(target: MappingTarget, random: Random): string {
  let ranked = popularity.get(target);
  if (!ranked) {
    ranked = shuffled([...target.ids], new Random(target.ids.length * 31 + 7));
    popularity.set(target, ranked);
  }
  return ranked[Math.floor(ranked.length * Math.pow(random.next(), 4))];
}

function unique(seen: Set<string>, m: MappingContent): boolean {
  const key = `${m.mapType} ${m.from.code} ${m.to.sourceUrl} ${m.to.code}`;
  if (seen.has(key)) return false;
  seen.add(key);
  return true;
}

/** Columns of INSERT_MAPPINGS' unnest, one array each. */
class MappingVersionColumns {
  readonly mnemonic: string[] = [];
  readonly validFrom: number[] = [];
  readonly validTo: Array<number | null> = [];
  readonly retired: boolean[] = [];
  readonly mapType: string[] = [];
  readonly fromSourceUrl: string[] = [];
  readonly fromCode: string[] = [];
  readonly fromRepositoryId: string[] = [];
  readonly toSourceUrl: string[] = [];
  readonly toCode: string[] = [];
  readonly toRepositoryId: string[] = [];
  readonly sortWeight: Array<number | null> = [];
  readonly externalId: Array<string | null> = [];
  readonly checksumStandard: string[] = [];
  readonly checksumSmart: string[] = [];
  readonly updateComment: Array<string | null> = [];
  readonly searchText: string[] = [];

  push(
    content: MappingContent,
    fromRepositoryId: string,
    toRepositoryId: string,
    validFrom: number,
    validTo: number | null,
    comment: string | null,
  ): void {
    const derived = mappingDerivedColumns(content);
    this.mnemonic.push(content.id);
    this.validFrom.push(validFrom);
    this.validTo.push(validTo);
    this.retired.push(content.retired);
    this.mapType.push(content.mapType);
    this.fromSourceUrl.push(content.from.sourceUrl);
    this.fromCode.push(content.from.code);
    this.fromRepositoryId.push(fromRepositoryId);
    this.toSourceUrl.push(content.to.sourceUrl);
    this.toCode.push(content.to.code);
    this.toRepositoryId.push(toRepositoryId);
    this.sortWeight.push(content.sortWeight);
    this.externalId.push(content.externalId);
    this.checksumStandard.push(derived.checksumStandard);
    this.checksumSmart.push(derived.checksumSmart);
    this.updateComment.push(comment);
    this.searchText.push(derived.searchText);
  }

  get length(): number {
    return this.mnemonic.length;
  }

  parameters(repositoryId: string, username: string, mappingIds: string[]): unknown[] {
    return [
      repositoryId,
      username,
      mappingIds,
      this.mnemonic,
      this.validFrom,
      this.validTo,
      this.retired,
      this.mapType,
      this.fromSourceUrl,
      this.fromCode,
      this.fromRepositoryId,
      this.toSourceUrl,
      this.toCode,
      this.toRepositoryId,
      this.sortWeight,
      this.externalId,
      this.checksumStandard,
      this.checksumSmart,
      this.updateComment,
      this.searchText,
    ];
  }
}

/** What `writeJsonLines` wrote. */
export interface JsonLinesDataset {
  file: string;
  org: string;
  lines: number;
  concepts: number;
  mappings: number;
  bytes: number;
}

/**
 * The CIEL-scale dictionary as OCL bulk import JSON lines (what a dictionary manager loads): the
 * org, the main source and the sources it maps to, the main source's concepts (as generated for
 * the database, same names, descriptions and extras), then its mappings — a quarter inside the
 * source (`to_concept_url`), the rest to codes of the other sources (`to_source_url` and
 * `to_concept_code`, most of them codes those sources do not hold, as when mapping to a
 * terminology loaded elsewhere). Deterministic for a seed and sizes.
 */
export async function writeJsonLines(
  file: string,
  options: { org?: string; concepts?: number; mappings?: number; seed?: number } = {},
): Promise<JsonLinesDataset> {
  const org = options.org ?? 'CIEL-IMPORT';
  const conceptCount = options.concepts ?? DEFAULTS.concepts;
  const mappingCount = options.mappings ?? DEFAULTS.mappings;
  const random = new Random(options.seed ?? DEFAULTS.seed);
  const molecules = drugNames(new Random((options.seed ?? DEFAULTS.seed) ^ 0x5eed), 800);
  const [main, ...others] = SOURCES;
  const url = (profile: SourceProfile): string => `/orgs/${org}/sources/${profile.id}/`;
  const out = fs.createWriteStream(file);
  let bytes = 0;
  let lines = 0;
  const write = async (value: unknown): Promise<void> => {
    const line = `${JSON.stringify(value)}\n`;
    bytes += Buffer.byteLength(line);
    lines += 1;
    if (!out.write(line)) await once(out, 'drain');
  };
  await write({ type: 'Organization', id: org, name: 'CIEL import benchmark' });
  for (const profile of SOURCES) {
    await write({
      type: 'Source',
      id: profile.id,
      owner: org,
      owner_type: 'Organization',
      name: profile.name,
      description: profile.description,
      source_type: profile.sourceType,
      default_locale: 'en',
    });
  }
  const ids: string[] = [];
  for (let n = 0; n < conceptCount; n += 1) {
    const id = main.conceptId(n + 1, random);
    ids.push(id);
    const content = generateConcept(random, main, id, molecules);
    await write({
      type: 'Concept',
      owner: org,
      owner_type: 'Organization',
      source: main.id,
      id,
      concept_class: content.conceptClass,
      datatype: content.datatype,
      external_id: content.externalId,
      retired: content.retired,
      names: content.names.map(({ uuid: _uuid, ...name }) => name),
      descriptions: content.descriptions.map(({ uuid: _uuid, ...description }) => description),
      ...(content.extras ? { extras: content.extras } : {}),
    });
  }
  const seen = new Set<string>();
  for (let n = 0; n < mappingCount; n += 1) {
    let line: Record<string, unknown>;
    let key: string;
    do {
      const mapType: string = random.weighted<string>(MAIN_MAP_TYPES);
      const from = random.pick(ids);
      const internal = mapType === 'Q-AND-A' || mapType === 'CONCEPT-SET' || random.chance(0.15);
      const target = internal ? main : random.pick(others);
      const code = internal
        ? random.pick(ids)
        : target.conceptId(random.int(1, 40 * (mappingCount / conceptCount + 1) * 1000), random);
      key = `${mapType} ${from} ${target.id} ${code}`;
      line = {
        type: 'Mapping',
        owner: org,
        owner_type: 'Organization',
        source: main.id,
        id: String(n + 1),
        map_type: mapType,
        from_concept_url: `${url(main)}concepts/${from}/`,
        ...(internal
          ? { to_concept_url: `${url(main)}concepts/${code}/` }
          : { to_source_url: url(target), to_concept_code: code }),
        ...(internal ? { sort_weight: random.int(1, 20) } : {}),
      };
    } while (seen.has(key));
    seen.add(key);
    await write(line);
  }
  out.end();
  await once(out, 'finish');
  return { file, org, lines, concepts: conceptCount, mappings: mappingCount, bytes };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function rate(rows: number, seconds: number): string {
  return seconds > 0 ? count(Math.round(rows / seconds)) : '–';
}

function secondsSince(started: number): string {
  return ((performance.now() - started) / 1000).toFixed(1);
}

// ---------------------------------------------------------------------------------------------
// Command line

function envNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number.`);
  return value;
}

const FLAGS: Record<string, keyof GenerateOptions> = {
  '--concepts': 'concepts',
  '--other-concepts': 'otherConcepts',
  '--mappings': 'mappings',
  '--sources': 'sources',
  '--seed': 'seed',
  '--retired-percent': 'retiredPercent',
  '--chunk-size': 'chunkSize',
};

async function main(argv: string[]): Promise<void> {
  const options: GenerateOptions = {
    concepts: envNumber('BENCH_CONCEPTS'),
    otherConcepts: envNumber('BENCH_OTHER_CONCEPTS'),
    mappings: envNumber('BENCH_MAPPINGS'),
    seed: envNumber('BENCH_SEED'),
    log: (line) => process.stdout.write(`${line}\n`),
  };
  let url: string | undefined;
  let migrate = false;
  let jsonl: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--replace') options.replace = true;
    else if (arg === '--jsonl') {
      jsonl = argv[++i];
      if (!jsonl) throw new Error('--jsonl needs a file name.');
    } else if (arg === '--migrate') migrate = true;
    else if (arg === '--org' || arg === '--username') {
      const value = argv[++i];
      if (!value) throw new Error(`${arg} needs a value.`);
      options[arg === '--org' ? 'org' : 'username'] = value;
    } else if (arg in FLAGS) {
      const value = Number(argv[++i]);
      if (!Number.isInteger(value) || value < 0) throw new Error(`${arg} needs a whole number.`);
      (options as Record<string, unknown>)[FLAGS[arg]] = value;
    } else if (!arg.startsWith('--') && url === undefined) url = arg;
    else throw new Error(`Unknown argument '${arg}'.`);
  }
  if (jsonl) {
    const written = await writeJsonLines(jsonl, options);
    process.stdout.write(
      `${jsonl}: ${count(written.lines)} JSON lines, ${count(written.bytes)} bytes\n`,
    );
    return;
  }
  url ??= process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      'Usage: node dist/bench/generate.js <DATABASE_URL> [--concepts N] [--other-concepts N] ' +
        '[--mappings N] [--sources N] [--seed N] [--retired-percent N] [--chunk-size N] ' +
        '[--org ID] [--username NAME] [--replace] [--migrate]',
    );
  }
  if (migrate) await migrateDatabase(url);
  const result = await generateDictionary(url, options);
  process.stdout.write(
    `${result.org}: ${result.sources.length} sources, ${count(result.rows)} rows, ` +
      `${result.totalSeconds.toFixed(1)} s in all\n`,
  );
}

async function migrateDatabase(url: string): Promise<void> {
  const dataSource = createDataSource(url, { poolSize: 1, statementTimeoutMs: 0 });
  await dataSource.initialize();
  try {
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.destroy();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
