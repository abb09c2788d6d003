export { type CheckResult, check, loadDotEnv } from './check.js';
export { loadFixture } from './fixture.js';
export { runScaling, scalingArtifact } from './scaling.js';
export { runStory } from './story.js';
