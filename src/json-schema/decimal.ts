/**
 * `multipleOf` as decimal arithmetic (contract §13.1): 1.13 is a multiple of 0.01, though
 * 1.13 / 0.01 is 112.99999999999999 in binary floating point. Each number is read as the decimal
 * JavaScript prints for it (the shortest that reads back as the same double, so what the sender
 * wrote for any amount of up to 15 significant digits) and the division is done on integers.
 */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value) || !Number.isFinite(divisor) || divisor <= 0) return false;
  if (value === 0) return true;
  const x = asDecimal(value);
  const m = asDecimal(divisor);
  const exponent = Math.min(x.exponent, m.exponent);
  const scaledValue = x.digits * 10n ** BigInt(x.exponent - exponent);
  const scaledDivisor = m.digits * 10n ** BigInt(m.exponent - exponent);
  return scaledValue % scaledDivisor === 0n;
}

/** `n` as digits × 10^exponent, from its shortest decimal form ("1.13", "1e-7", "1.5e+300"). */
function asDecimal(n: number): { digits: bigint; exponent: number } {
  const match = /^-?(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(n));
  if (!match) throw new Error(`not a finite number: ${n}`);
  const [, whole, fraction = '', power = '0'] = match;
  return { digits: BigInt(whole + fraction), exponent: Number(power) - fraction.length };
}
