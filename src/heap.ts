import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what its last full collection kept, in percent.
 * V8's own factor (up to 4×, for a heap this small) let a CIEL export's promoted batch garbage
 * pile up to ~160 MB between full collections (a peak RSS of 315–345 MB with ~48 MB live); at
 * 50% the peak is ~200 MB, for a few more full collections (tens of ms each).
 */
const HEAP_GROWING_PERCENT = 50;

/** Sets this process's heap growth; called first by the entry points that serve requests. */
export function limitHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
