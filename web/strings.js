// strings.js holds every word the player shows that does not come from a
// lesson. A translation is one more object beside `en` with the same keys
// (a missing key falls back to English), chosen with ?lang=ko in the URL.
// Placeholders are written {name} and filled by t(key, {name: value}).

const en = {
  appTitle: 'idemlab',
  appTagline: 'Make a retried money transfer safe',
  lesson: 'Lesson',
  lessons: 'Lessons',
  prevLesson: 'Previous lesson',
  nextLesson: 'Next lesson',
  lessonDone: 'done',
  loadingLesson: 'Loading the lesson…',
  lessonLoadFailed: 'The lesson could not be loaded: {error}',
  lessonsMissing: 'No lessons were found at api/lessons.json.',
  published: 'This level’s published policy. Retention: {retention}. Scope: {scope}.',
  hints: 'Hints',
  goals: 'Goals',
  goalMet: 'met',
  goalNotYet: 'not yet',
  goalExpectBreak: 'break it',
  goalExpectHold: 'it must hold',
  goalExpectStatus: 'answer',
  goalUnderPolicy: 'Try it under: {policy}',

  engineLoading: 'Starting the engine (Go and SQLite in WebAssembly)…',
  engineReady: 'Engine ready',
  engineMissing: 'The engine module is missing: run make run (it builds the module) and reload.',
  engineNoWasm: 'This browser cannot run WebAssembly, so the engine cannot start. Use a current Chrome, Firefox or Safari.',
  engineFailed: 'The engine failed to start: {error}',
  engineError: 'The engine said: {error}',

  scenario: 'Scenario',
  openOnBench: 'Open on the bench',
  onBench: 'On the bench',
  benchEmpty: 'Choose a scenario in the lesson to put it on the bench.',
  level: 'level',
  laneCount: '{n} lanes',
  step: 'Step {n}',
  stepDone: 'Step {n}: every lane has finished',
  clock: 'clock +{time}',

  controls: 'Controls',
  stepLane: 'Step {lane}',
  stepNoLane: 'Step',
  back: 'Back',
  runAll: 'Run to the end',
  reset: 'Reset',
  movesNext: 'moves next',
  chooseLane: 'Lane that moves next',
  fault: 'Fault',
  injectAt: 'Inject at {lane}’s next phase',
  inject: 'Inject',
  faultCrash: 'crash the server',
  faultLoseResponse: 'lose the response',
  faultClientTimeout: 'client times out',
  faultHelp: 'crash: the server dies before the phase runs. lose the response: the server finishes, the answer never arrives. client times out: the client stops waiting here; the server carries on.',

  lanes: 'Lanes: one per client attempt',
  laneIntent: 'intent',
  laneCustomer: 'customer',
  laneKey: 'key',
  laneNoKey: '(no key)',
  laneNext: 'next: {phase}',
  laneWaiting: 'not sent yet',
  laneRunning: 'running',
  laneDone: 'finished',
  laneCrashed: 'crashed',
  laneNotDelivered: 'the client never saw this answer',
  laneReplayed: 'replayed',
  laneScriptedFault: 'scripted fault: {kind} at {phase}',
  verdictOk: 'ok',
  verdictInfo: 'info',
  verdictFail: 'fail',
  verdictPending: 'pending',
  verdictInfoText: 'client timed out but the server committed',
  verdictOkText: 'the client got its answer',
  verdictFailText: 'part of a broken rule',
  verdictPendingText: 'still on its way',
  showResponse: 'Response',
  noEvents: 'No phase has run yet.',

  lastStep: 'The step that just ran',
  lastNone: 'Nothing has run yet: press Step.',
  lastSQL: 'SQL it ran',
  noSQL: '(this phase ran no SQL)',
  outcome: 'outcome',
  note: 'note',

  keyTable: 'Key table (UNIQUE on scope and key)',
  looseTable: 'Key table without a constraint (check-then-insert)',
  noRows: 'no rows',
  colScope: 'scope',
  colKey: 'key',
  colCustomer: 'customer',
  colState: 'state',
  colOwner: 'owner',
  colFingerprint: 'fingerprint',
  colResponse: 'stored response',
  colExpires: 'expires',
  colTransfer: 'transfer',
  never: 'never',

  balances: 'Balances',
  colAccount: 'account',
  colBalance: 'balance (won)',
  ledger: 'Transfers in the ledger',
  colId: 'id',
  colFrom: 'from',
  colTo: 'to',
  colAmount: 'amount',

  rules: 'Rule checks',
  ruleHolds: 'holds',
  ruleBroken: 'broken',
  summary: 'intents: {intents} · transfers: {transfers} · duplicates: {duplicates} · paid twice: {paid} won · 409: {conflicts} · 422: {mismatches} · replays: {replays}',

  sandbox: 'Sandbox: can you still break it?',
  sandboxIntro: 'Flip one knob of this level’s policy; the other knobs go back to the level’s setting, and the scenario starts over under the new policy.',
  sandboxChanged: 'changed from the level',
  sandboxBack: 'Back to the level’s policy',
  knob_claim: 'claim',
  knob_fingerprint: 'fingerprint',
  knob_in_progress: 'in progress',
  knob_replay: 'replay',
  knob_scope: 'scope',
  knob_retention: 'retention',
  knob_lease: 'lease',

  day: 'A day of traffic',
  runDay: 'Run the day',
  dayRunning: 'Replaying the day: {done} of {total} requests…',
  dayDone: 'The day is over: {attempts} requests.',

  keys: 'Keyboard',
  keysIntro: 'Everything works from the keyboard. Keys act on the bench unless you are typing in a field.',
  keyStep: 'step the lane that moves next',
  keyBack: 'one step back',
  keyLane: 'choose lane 1 to 9 to move next',
  keyNextLane: 'choose the next lane',
  keyInject: 'inject the chosen fault at that lane’s next phase',
  keyRun: 'run to the end',
  keyReset: 'reset the scenario',
  keyLessonNav: 'previous / next lesson',
  keyScenarioNav: 'previous / next scenario in this lesson',
  keyTheme: 'light or dark theme',
  keyHelp: 'show or hide this list',
  theme: 'Theme',
  language: 'Language',
  themeLight: 'Light theme',
  themeDark: 'Dark theme',
  skipToBench: 'Skip to the bench',
};

export const messages = { en };

let lang = 'en';

// setLang chooses the player's language; unknown languages keep English.
export function setLang(l) {
  lang = messages[l] ? l : 'en';
  return lang;
}

export function currentLang() {
  return lang;
}

// t returns the string for key in the current language with {name}
// placeholders filled from vars.
export function t(key, vars) {
  const table = messages[lang] || en;
  let s = table[key] ?? en[key] ?? key;
  if (vars) {
    s = s.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
  }
  return s;
}
