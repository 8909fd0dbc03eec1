/** Packages that ship ES modules only: Jest's CommonJS runtime needs them compiled (Node >= 24.9 would not). */
const esmOnly = ['jose', 'uuid'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest'],
    [`/node_modules/(${esmOnly.join('|')})/.+\\.js$`]: ['@swc/jest'],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join("|")})/)(?!.*/node_modules/)`],
  testTimeout: 30000,
  maxWorkers: 2,
};
