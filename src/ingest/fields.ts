import { isForbiddenKey } from '../body/safe-json';

/**
 * Collects form and multipart values by name: `x[]` and a repeated `x` become the array
 * `x`; a single `x` stays a single value. Dangerous names are dropped.
 */
export class FieldCollector {
  private readonly fields: Record<string, unknown> = {};
  private readonly arrays = new Set<string>();

  add(rawName: string, value: unknown): void {
    const isArray = rawName.endsWith('[]');
    const name = isArray ? rawName.slice(0, -2) : rawName;
    if (name === '' || isForbiddenKey(name)) return;
    if (this.arrays.has(name)) {
      (this.fields[name] as unknown[]).push(value);
    } else if (Object.hasOwn(this.fields, name)) {
      this.fields[name] = [this.fields[name], value];
      this.arrays.add(name);
    } else if (isArray) {
      this.fields[name] = [value];
      this.arrays.add(name);
    } else {
      this.fields[name] = value;
    }
  }

  result(): Record<string, unknown> {
    return this.fields;
  }
}
