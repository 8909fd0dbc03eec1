/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // jose ships ES modules only; Jest's CommonJS runtime needs it compiled (Node >= 24.9 would not).
  transform: { '^.+\\.ts$': ['@swc/jest'], '/node_modules/jose/.+\\.js$': ['@swc/jest'] },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  testTimeout: 30000,
  maxWorkers: 2,
};
