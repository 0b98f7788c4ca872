// lab-words.js holds the words of the lab page ("Your endpoint") in English
// and Korean, in the same key order, and what each rung of the ladder asks
// of the student's handler. The rungs say what to add and give hints; they
// never give the code.

export const RUNGS = ['naive', 'unique', 'fingerprint', 'in-progress', 'replay', 'scoped'];

const en = {
  labTitle: 'Your endpoint',
  labTagline: 'Write the transfer handler yourself, then race it',
  backToLessons: '◀ Lessons',
  theme: 'Theme',
  language: 'Language',
  labIntro:
    'This is your own transfer endpoint, in JavaScript, on a real SQLite database in your browser. It starts as the naive handler: every request moves the money. Climb the rungs: each one names what your handler must do next, and the explorer and the grade tell you whether it does. The file runs the same way on your machine: idemlab lab serve handler.js, then idemlab grade.',
  rungs: 'Rungs',
  rungTitle: 'Rung {n}: {name}',
  rungLabel: 'rung {n} ({name})',
  rungName_naive: 'naive',
  rungName_unique: 'unique',
  rungName_fingerprint: 'fingerprint',
  rungName_in_progress: 'in-progress',
  rungName_replay: 'replay',
  rungName_scoped: 'scoped',
  rungGoal: 'What this rung adds',
  rungHints: 'Hints',
  handlerLabel: 'Your handler (JavaScript): async function transfer(req, db, pay)',
  schemaLabel: 'Your tables (SQL): run once, after the lab’s accounts and transfers',
  apiLink: 'The API: req, db, pay and lab',
  rulesAll: 'The rules the checker judges (the grade names them by number)',
  apiFailed: 'The API reference could not be loaded ({error}): it is docs/lab-handler.md in the source.',
  download: '⤓ Download',
  openFile: '⤒ Open a file',
  share: '↗ Copy a link to this code',
  startOver: '↺ Start this rung over',
  startOverConfirm:
    'Start this rung over from where it starts: the code you kept on the rung before it (the naive handler on rung 1)? “Bring back my code” undoes it.',
  startedOver: 'This rung starts over from {from}. “Bring back my code” brings back what you had.',
  fromRung: 'your code of {rung}',
  fromStart: 'the naive handler',
  saved: 'Saved in this browser.',
  savedNot: 'This browser does not keep your code (storage is off): download it to keep it.',
  linkCopied: 'Link copied: it carries your code and tables. Anyone who opens it sees them.',
  linkReady: 'Your link (copy it from here):',
  linkTooLong: 'The link is {n} characters long; some chat programs cut long links. Download the file instead if it does not open.',
  opened: 'Opened {name}.',
  openedLink: 'Opened the code from the link, as rung {rung}.',
  openedLinkAside:
    'Opened the code from the link, as rung {rung}. Your own code of that rung is set aside: “Bring back my code” restores it.',
  restore: '↶ Bring back my code',
  restored: 'Your own code is back.',
  openFailed: 'That file could not be opened: {error}',
  linkFailed: 'The link’s code could not be read: {error}',
  notAHandler: 'it declares no async function transfer(req, db, pay)',
  syntaxError:
    'Syntax error at line {line}, near “{near}”: the code cannot be read from here. Put it on the bench to see the JavaScript engine’s own message.',
  atLine: 'line {line}',
  goToLine: 'Line {line}',
  goToLineLabel: 'Go to line {line} in the editor',
  editorMissing: 'The code editor is not built: run make run (it builds it) and reload. You can still edit in the plain box below.',
  startMissing: 'The naive handler could not be loaded: {error}',
  raceHeading: 'Race it',
  raceIntro:
    'Put a scenario on the bench and choose which attempt runs next: each of your handler’s awaits is a step, and the statement it is about to run is shown. Or let the explorer try every order of two attempts, and random orders of three, and open the shortest order that breaks a rule: it tries the scenario you chose first, then the others.',
  raceKeys: 'On the bench, ← and → move between the attempts.',
  scenario: 'Scenario',
  benchStart: '▶ Put it on the bench',
  explore: '⌕ Let the explorer break it',
  stop: '■ Stop',
  engineStarting: 'Starting the engine for your handler…',
  engineFailedLab: 'The engine could not start: {error}',
  loadFailed: 'Your handler could not be loaded: {error}',
  onBench: 'On the bench: {scenario}. Choose the attempt that runs next.',
  runStep: 'Run {id}’s step',
  runStepWaits: '{id} waits for the lock',
  crash: 'Crash {id} here',
  loseAnswer: 'Lose {id}’s answer',
  timeOut: '{id}’s client gives up',
  clientGone: '{id}’s client has given up waiting. The server does not know: {id} goes on to its end, and its answer will reach no one.',
  answerWillBeLost: 'Whatever {id} answers will be lost on the way: the client will never read it. {id} goes on to its end.',
  nextCall: 'next: {op}, line {line}',
  waitsLock: 'waits for the write lock ({holder} holds it): run {holder}’s step first',
  waitsNoStep: '{id} waits for the write lock that {holder} holds: nothing ran. Run {holder}’s step first.',
  sends: 'sends',
  notSent: 'not sent yet',
  notSentAfter: 'not sent yet: it is sent once {after} has ended',
  answered: 'answered {status}',
  answerLost: 'answered {status}; the client never read it',
  crashed: 'crashed: its connection closed, its open transaction rolled back',
  crashedNoTx: 'crashed: its connection closed; it had no transaction open',
  threw: 'threw {name} at line {line}: {message}',
  threwNoLine: 'threw {name}: {message}',
  cut: 'never answered',
  stopped: 'Stopped: {why}',
  benchEnded: 'On the bench: {scenario}. Every attempt has ended.',
  benchStale:
    'On the bench: {scenario}, with the code as it was when it was put there. Your code has changed since: put the scenario on the bench again to run it.',
  verdictHeading: 'The checker’s verdict',
  ruleHolds: 'holds',
  ruleBroken: 'broken',
  ruleUnknown7: 'unknown: your file publishes no retentionSeconds, so no client can know how long a key is kept',
  ruleExpected: 'expected at this rung: {rung} fixes it',
  ruleAsked: '{rung} asks for it: this rung is not done',
  ruleAskedEvery: 'every rung asks that your handler answer: this rung is not done',
  exploring: 'The explorer is trying schedules of “{scenario}”, the scenario you chose…',
  exploringOthers: 'No break in “{scenario}”; the explorer is trying the other scenarios…',
  exploredNone:
    'No break found in any of the {n} scenarios (“{chosen}” first): {tried} schedules tried in {ms} ms (every order of two attempts up to {bound} steps, random orders of three or more). Not a proof: a bigger bound might find one.',
  exploredBroke:
    'Broke rule {n} ({title}) in “{scenario}”, the scenario you chose, after {tried} schedules: the shortest order found has {steps} steps (switches from one attempt to another: {switches}).',
  exploredBrokeOther:
    'No break in “{chosen}”, the scenario you chose ({triedChosen} schedules). Searching the other scenarios, it broke rule {n} ({title}) in “{scenario}”, after {tried} schedules in all: the shortest order found has {steps} steps (switches from one attempt to another: {switches}).',
  exploredBrokeOtherLater:
    'In “{chosen}”, the scenario you chose, only rules that later rungs fix broke ({triedChosen} schedules). Searching the other scenarios for this rung’s own, it broke rule {n} ({title}) in “{scenario}”, after {tried} schedules in all: the shortest order found has {steps} steps (switches from one attempt to another: {switches}).',
  exploredLater:
    'Every rule broken here is one that a later rung fixes, so at {rung} this break is expected; no scenario broke what this rung asks. Whether this rung holds in every scenario: ✓ Check every scenario.',
  exploredAsked: 'This rung ({rung}) is not done: what it asks broke here (rule{s} {rules}).',
  exploredAskedNote: 'This rung ({rung}) is not done: {what} (the note below).',
  noteWhat_claim_never_settled: 'a claim a crash left is never settled',
  noteWhat_completed_apart: 'a crash after the transfer’s commit left its key in progress',
  noteWhat_conflict_without_retry_after: 'a 409 came without Retry-After',
  noteWhat_replay_unmarked: 'a replay came without Idempotent-Replayed: true',
  noteWhat_handler_failed: 'your handler answered 500 (it threw)',
  noteWhat_network_key_shared: 'another customer’s payment met the same key at the network',
  noteWhat_reordered_refused: 'the same request, reordered, was refused as a different one',
  noteWhat_raw_bytes_fingerprint: 'the same request, re-spaced, was refused as a different one',
  gradeTopNoted:
    'No scenario broke a rule within the explorer’s bound, but the notes above say what is still short: the top rung is not reached yet.',
  replayFound: '▶ Play that order on the bench',
  played: 'Played on the bench: “{scenario}”, in the order {schedule}.',
  scheduleWords: 'The order: {schedule}',
  traceHeading: 'Every step so far',
  gradeAll: '✓ Check every scenario',
  scenario_simultaneous_retries: 'two identical requests at the same moment',
  scenario_retry_after_lost_answer: 'a retry after a lost answer',
  scenario_retry_after_another_transfer: 'a retry after another transfer moved the balance',
  scenario_corrected_amount: 'a corrected amount under the same key',
  scenario_reordered_json: 'a retry with its JSON members reordered',
  scenario_another_customers_key: 'another customer using the same key',
  scenario_crash_at_every_step: 'a crash at any step, then a retry',
  scenario_crash_then_late_retry: 'a crash at any step, then a retry ten minutes later',
  scenario_retry_after_retention: 'a retry at the end of the clients’ retry hour',
  scenario_three_retries: 'three identical requests, in random orders',
  scenario_other_customer_same_body: 'another customer sending the same body under the same key',
  scenario_refusal_then_top_up: 'insufficient funds, a top-up, then the retry',
  scenario_unknown_payee_then_opened: 'an unknown payee, the account opened, then the retry',
  scenario_reordered_after_answer: 'an answered request, then a retry with its JSON members reordered',
  scenario_missing_key: 'no Idempotency-Key, and a retry after a lost answer',
  scenario_repaired_body: 'a body refused 400, then repaired under the same key',
  scenario_repaired_auth: 'a transfer refused 401 for want of a customer, then sent with one under the same key',
  scenario_malformed_keys: 'keys the contract refuses (a bare token, empty, 256 characters, non-ASCII, a list, a number, a parameter)',
  scenario_longest_key: 'a valid key of exactly 255 characters, and its retry',
  scenario_retry_three_ways: 'an answered request sent again re-spaced, reordered, and both',
  scenario_day: 'a small day of traffic: three customers, eight intents, lost answers and their retries',
  grading: 'Checking scenario {n} of {total}: {scenario}…',
  gradeHeading: 'Every scenario, explored',
  gradeScenario: 'Scenario',
  gradeResult: 'What the explorer found',
  gradeHeld: 'no break in {tried} schedules',
  gradeBroke: 'broke {rules} ({steps} steps)',
  gradeBrokeLater: 'broke {rules} ({steps} steps): expected at this rung, later rungs fix it',
  gradeAlsoBroke: 'Another order broke {rule} ({steps} steps): this rung asks for it.',
  gradeAlsoBrokeLater: 'Another order broke {rule} ({steps} steps): expected at this rung.',
  gradePlay: '▶ Play it',
  // A button beside one line of a row (another order's break, a note's
  // order): not the row's own, which plays the row's break.
  gradePlayThis: '▶ Play this line’s order',
  gradeNoted: 'no rule broke in {tried} schedules, but an answer is not the contract’s',
  gradeNote: 'The contract says otherwise: {says}',
  noteNeverSettled: 'Never settled: {says}',
  gradeNotedSettle: 'no rule broke in {tried} schedules, but an intent is never settled',
  gradeAnswers: 'Answered, in one order: {answers}',
  exploredNoted: 'No rule broke, but the notes below ({n}) say what is not as it should be:',
  gradeCause: 'What went wrong: {says}',
  gradeFix: 'What to change: {fix}',
  gradeTop:
    'No scenario broke a rule within the explorer’s bound: your handler holds what the top rung (scoped) holds. Not a proof; run it with idemlab lab serve and grade it with idemlab grade too.',
  gradeNext: 'Broken somewhere: rule{s} {rules}. The earliest rung that fixes {one}: {rung}.',
  oneOfThem: 'one of them',
  itAlone: 'it',
  rungDone: '✔ This rung, {rung}, is done: every scenario holds what it asks.',
  rungDoneLater: 'Left for the later rungs (broken, or rule 7 unknown): rule{s} {rules}.',
  rungDoneLaterNote: 'Left for {rung} too: {what} (the notes below).',
  rungNextGoal: 'Next, {rung}: {goal}',
  goToRung: '▶ Go to {rung}',
  rungDoneMark: 'its last grade said done',
  rungNotDone: '✘ This rung, {rung}, is not done yet: what it asks broke (rule{s} {rules}) in: {scenarios}.',
  rungNotDone7: '✘ This rung, {rung}, is not done yet: it asks you to publish retentionSeconds (rule 7).',
  rungNotDone7Short:
    '✘ This rung, {rung}, is not done yet: the retention your file publishes is not longer than the clients’ hour of retries (rule 7).',
  gradeBroken7:
    'Rule 7 is broken: the retention your file publishes ({seconds} s) is not longer than the clients’ hour of retries. That is so in every order alike, so the explorer looks past it for the rules an order breaks. What to change: keep keys for longer than an hour, and say so in your file (const retentionSeconds = 86400, say).',
  rungNotDoneNote: '✘ This rung, {rung}, is not done yet: {what}, in: {scenarios}.',
  andMore: '{list} and {n} more',
  gradeUnknown7:
    'Rule 7 is unknown: your file publishes no retentionSeconds, so no client can know how long a key is kept. idemlab grade marks the rule unknown and fails until you publish it (longer than the clients’ hour of retries).',
  gradeTopUnknown:
    'No scenario broke a rule within the explorer’s bound, but rule 7 stays unknown until your file publishes retentionSeconds (the scoped rung).',

  goal_naive:
    'Nothing yet: this is where you start. Every request moves the money, so a client that retries after a lost answer pays twice. Read the handler, then go to the next rung.',
  hints_naive: [
    'Each await is a step: while your handler waits for the database, another attempt may run.',
    'The lab judges balances and the payment network’s charges, never your own tables.',
  ],
  goal_unique:
    'Claim the Idempotency-Key: a key table whose primary key is the key, and one INSERT that claims it. The second INSERT of the same key must fail: that failure is the verdict, and the retry must not move money.',
  hints_unique: [
    'Read the key with lab.parseKey(req.key); without a valid key, answer 400 before anything moves.',
    'Do not look first and insert after: two retries at the same moment both see “absent”.',
    'INSERT OR IGNORE raises nothing: a retry looks like a new request unless you read changes.',
    'A rejected INSERT throws an error whose name is ConstraintError.',
    'What the repeat is answered is yours to choose at this rung (a 200 that says it was already processed will do); the later rungs make it the first answer.',
  ],
  goal_fingerprint:
    'Tell a retry from a different request under the same key: store a fingerprint of the request with the key, and answer 422 when a request under a used key differs.',
  hints_fingerprint: [
    'Two bodies with the same members in another order are the same request.',
    'lab.canonical and lab.sha256 are there for this: hash the endpoint (method and route) with the canonical body.',
  ],
  goal_in_progress:
    'A retry that arrives while the first attempt is still running must not be told “done”: claim the key as in progress, answer 409 with Retry-After meanwhile, and mark it completed in the same transaction that moves the money.',
  hints_in_progress: [
    'What happens if your attempt crashes between the transfer and the completion? That one is this rung’s. (Between the claim and the transfer, the claim stays in progress: the last rung settles it with a lease.)',
    'A refusal (402, 404) is an answer too; only an exception should release the claim.',
    'Retry-After is a number of seconds: Retry-After: 1.',
    'The payment call stays outside the transaction (it is someone else’s database); the completion goes in the transaction that moves the money.',
  ],
  goal_replay:
    'A retry must get the first answer byte for byte: store the status, the headers and the body you sent, and send them again with Idempotent-Replayed: true.',
  hints_replay: [
    'Rendering the answer again shows today’s balance and time, not the first answer’s.',
    'Store the answer in the transaction that commits the transfer.',
  ],
  goal_scoped:
    'Keys belong to a customer: scope them by (customer, endpoint, key), keep them longer than clients retry (publish retentionSeconds), give the payment network a key too, so that a charge is never made twice, and give each claim a lease, so that a retry takes over the claim of an attempt that crashed.',
  hints_scoped: [
    'Two customers may both use the key order-1.',
    'Clients retry for an hour; a retention of exactly 3600 seconds is not enough.',
    'pay({ …, key }) answers a repeated key with its first charge.',
    'The endpoint is the method and the route, as in POST /transfers.',
    'A claim whose attempt crashed stays in progress for ever: take it over once it is older than a lease (req.now, req.attempt as the owner). A takeover may pay again, unless the network was given the key.',
  ],
};

const ko = {
  labTitle: '나의 엔드포인트',
  labTagline: '송금 핸들러를 직접 작성하고 경합시켜 보세요',
  backToLessons: '◀ 레슨',
  theme: '테마',
  language: '언어',
  labIntro:
    '브라우저 안의 실제 SQLite 데이터베이스 위에서 JavaScript로 작성하는 나만의 송금 엔드포인트입니다. 처음 코드는 1단계(키 없음)의 naive 핸들러이며, 요청이 올 때마다 돈이 이동합니다. 단계를 하나씩 올라가세요. 각 단계는 핸들러가 다음에 해야 할 일을 알려 주고, 탐색기와 채점이 그 일을 해냈는지 알려 줍니다. 같은 파일은 내 컴퓨터에서도 똑같이 동작합니다. idemlab lab serve handler.js로 실행하고 idemlab grade로 채점하세요.',
  rungs: '단계',
  rungTitle: '{n}단계: {name} ({id})',
  rungLabel: '{n}단계({name})',
  rungName_naive: '키 없음',
  rungName_unique: '키 선점',
  rungName_fingerprint: '지문',
  rungName_in_progress: '처리 중',
  rungName_replay: '재생',
  rungName_scoped: '범위와 보존 기간',
  rungGoal: '이 단계에서 더할 것',
  rungHints: '힌트',
  handlerLabel: '나의 핸들러(JavaScript): async function transfer(req, db, pay)',
  schemaLabel: '나의 테이블(SQL): 실습의 accounts, transfers 테이블 다음에 한 번 실행됩니다',
  apiLink: 'API: req, db, pay, lab',
  rulesAll: '검사기가 판정하는 규칙(채점은 번호로 부릅니다)',
  apiFailed: 'API 설명을 불러오지 못했습니다({error}). 소스의 docs/lab-handler.ko.md에 있습니다.',
  download: '⤓ 내려받기',
  openFile: '⤒ 파일 열기',
  share: '↗ 이 코드의 링크 복사',
  startOver: '↺ 이 단계를 처음부터',
  startOverConfirm:
    '이 단계를 시작점부터 다시 할까요? 시작점은 앞 단계에서 저장한 코드입니다(1단계는 naive 핸들러). “내 코드 되돌리기”로 되돌릴 수 있습니다.',
  startedOver: '{from}에서 이 단계를 다시 시작합니다. “내 코드 되돌리기”로 작성하던 코드를 되살릴 수 있습니다.',
  fromRung: '{rung}의 코드',
  fromStart: 'naive 핸들러',
  saved: '이 브라우저에 저장했습니다.',
  savedNot: '이 브라우저는 코드를 저장하지 않습니다(저장소가 꺼져 있음). 보관하려면 내려받으세요.',
  linkCopied: '링크를 복사했습니다. 링크에는 코드와 테이블이 담겨 있어서, 여는 사람은 누구나 볼 수 있습니다.',
  linkReady: '링크(여기에서 복사하세요):',
  linkTooLong: '링크가 {n}자입니다. 긴 링크를 자르는 메신저도 있으니, 열리지 않으면 파일을 내려받아 보내세요.',
  opened: '파일을 열었습니다: {name}',
  openedLink: '링크의 코드를 {rung} 단계로 열었습니다.',
  openedLinkAside:
    '링크의 코드를 {rung} 단계로 열었습니다. 그 단계에서 작성하던 코드는 따로 보관해 두었으니 “내 코드 되돌리기”로 되살릴 수 있습니다.',
  restore: '↶ 내 코드 되돌리기',
  restored: '작성하던 코드를 되돌렸습니다.',
  openFailed: '파일을 열 수 없습니다: {error}',
  linkFailed: '링크의 코드를 읽을 수 없습니다: {error}',
  notAHandler: 'async function transfer(req, db, pay)가 선언되어 있지 않습니다',
  syntaxError:
    '{line}번째 줄, “{near}” 근처의 문법 오류: 여기서부터 코드를 읽을 수 없습니다. 벤치에 올리면 JavaScript 엔진의 메시지를 볼 수 있습니다.',
  atLine: '{line}번째 줄',
  goToLine: '{line}번째 줄',
  goToLineLabel: '편집기에서 {line}번째 줄로 이동',
  editorMissing:
    '코드 편집기가 빌드되지 않았습니다. make run을 실행하면 빌드됩니다. 새로고침하기 전까지는 아래의 일반 입력 상자에서 편집할 수 있습니다.',
  startMissing: 'naive 핸들러를 불러오지 못했습니다: {error}',
  raceHeading: '경합시키기',
  raceIntro:
    '시나리오를 벤치에 올리고 다음에 실행할 시도를 고르세요. 핸들러의 await 하나하나가 한 스텝이며, 곧 실행될 SQL 문이 표시됩니다. 또는 탐색기에게 맡기세요. 두 시도의 모든 순서와 세 시도의 무작위 순서를 시험해 보고, 규칙을 깨는 가장 짧은 순서를 보여 줍니다. 고른 시나리오를 먼저 시험하고, 그다음 나머지를 시험합니다.',
  raceKeys: '벤치에서는 ←, → 키로 시도 사이를 오갑니다.',
  scenario: '시나리오',
  benchStart: '▶ 벤치에 올리기',
  explore: '⌕ 탐색기로 깨뜨려 보기',
  stop: '■ 멈추기',
  engineStarting: '핸들러를 실행할 엔진을 시작하는 중…',
  engineFailedLab: '엔진을 시작하지 못했습니다: {error}',
  loadFailed: '핸들러를 불러오지 못했습니다: {error}',
  onBench: '벤치에 올린 시나리오: {scenario}. 다음에 실행할 시도를 고르세요.',
  runStep: '{id} 한 스텝 실행',
  runStepWaits: '{id}: 잠금 대기 중',
  crash: '여기서 {id} 죽이기',
  loseAnswer: '{id}의 응답 잃기',
  timeOut: '{id}의 클라이언트가 포기',
  clientGone:
    '{id}의 클라이언트는 기다리다 포기했습니다. 서버는 그 사실을 모르므로 {id} 시도는 끝까지 실행되고, 그 응답은 아무에게도 닿지 않습니다.',
  answerWillBeLost: '{id} 시도가 무엇으로 답하든 그 응답은 가는 길에 사라져 클라이언트가 읽지 못합니다. {id} 시도는 끝까지 실행됩니다.',
  nextCall: '다음: {op}, {line}번째 줄',
  waitsLock: '쓰기 잠금을 기다리는 중. 잠금을 잡은 시도: {holder}. {holder}의 스텝을 먼저 실행하세요',
  waitsNoStep:
    '{id} 시도는 {holder} 시도가 잡고 있는 쓰기 잠금을 기다립니다. 아무것도 실행하지 않았습니다. {holder}의 스텝을 먼저 실행하세요.',
  sends: '보내는 본문',
  notSent: '아직 보내지 않음',
  notSentAfter: '아직 보내지 않음({after} 시도가 끝나면 보냄)',
  answered: '응답 {status}',
  answerLost: '응답 {status}: 보냈지만 클라이언트는 읽지 못함',
  crashed: '죽음: 연결이 끊기고 열려 있던 트랜잭션은 롤백됨',
  crashedNoTx: '죽음: 연결이 끊김. 열려 있던 트랜잭션은 없었음',
  threw: '{line}번째 줄에서 {name} 발생: {message}',
  threwNoLine: '{name} 발생: {message}',
  cut: '응답하지 않음',
  stopped: '멈춤: {why}',
  benchEnded: '벤치에 올린 시나리오: {scenario}. 모든 시도가 끝났습니다.',
  benchStale:
    '벤치에 올린 시나리오: {scenario}. 벤치는 올릴 때의 코드를 실행합니다. 그 뒤에 코드가 바뀌었으니, 바뀐 코드를 실행하려면 시나리오를 다시 올리세요.',
  verdictHeading: '검사기의 판정',
  ruleHolds: '지켜짐',
  ruleBroken: '깨짐',
  ruleUnknown7: '알 수 없음: 파일이 retentionSeconds를 공개하지 않아, 키를 얼마나 보관하는지 어떤 클라이언트도 알 수 없음',
  ruleExpected: '이 단계에서는 예상된 결과: {rung}에서 고칩니다',
  ruleAsked: '{rung}에서 요구하는 규칙: 이 단계는 아직 끝나지 않음',
  ruleAskedEvery: '모든 단계가 핸들러의 응답을 요구합니다: 이 단계는 아직 끝나지 않음',
  exploring: '탐색기가 고른 시나리오 “{scenario}”의 실행 순서를 시험하는 중…',
  exploringOthers: '“{scenario}”에서는 깨지지 않았습니다. 탐색기가 나머지 시나리오를 시험하는 중…',
  exploredNone:
    '시나리오 {n}개 모두에서 깨지는 순서를 찾지 못했습니다(“{chosen}”부터). {ms}ms 동안 {tried}가지 순서를 시험했습니다(두 시도는 {bound}스텝까지의 모든 순서, 세 시도 이상은 무작위 순서). 증명은 아닙니다. 범위를 넓히면 찾을 수도 있습니다.',
  exploredBroke:
    '고른 시나리오 “{scenario}”에서 깨진 규칙: {n}. {title}. {tried}가지 순서를 시험했고, 찾은 가장 짧은 순서는 {steps}스텝이며 시도 사이를 {switches}번 오갑니다.',
  exploredBrokeOther:
    '고른 시나리오 “{chosen}”에서는 깨지지 않았습니다({triedChosen}가지 순서). 나머지 시나리오를 찾아보니 “{scenario}”에서 깨진 규칙: {n}. {title}. 모두 {tried}가지 순서를 시험했고, 찾은 가장 짧은 순서는 {steps}스텝이며 시도 사이를 {switches}번 오갑니다.',
  exploredBrokeOtherLater:
    '고른 시나리오 “{chosen}”에서는 다음 단계들이 고칠 규칙만 깨졌습니다({triedChosen}가지 순서). 이 단계의 규칙을 찾아 나머지 시나리오를 시험해 보니 “{scenario}”에서 깨진 규칙: {n}. {title}. 모두 {tried}가지 순서를 시험했고, 찾은 가장 짧은 순서는 {steps}스텝이며 시도 사이를 {switches}번 오갑니다.',
  exploredLater:
    '여기서 깨진 규칙은 모두 다음 단계들이 고칠 규칙이라 {rung}에서는 예상된 결과이며, 이 단계가 요구하는 규칙을 깬 시나리오는 없었습니다. 이 단계가 모든 시나리오에서 지켜지는지는 ✓ 모든 시나리오 검사로 확인하세요.',
  exploredAsked: '이 단계는 아직 끝나지 않았습니다({rung}). 이 단계가 요구하는 규칙이 여기서 깨졌습니다(규칙 {rules}).',
  exploredAskedNote: '이 단계는 아직 끝나지 않았습니다({rung}). 아래 참고: {what}.',
  noteWhat_claim_never_settled: '죽은 시도가 남긴 선점이 끝내 정리되지 않음',
  noteWhat_completed_apart: '송금을 커밋한 뒤 죽어서 키가 처리 중으로 남음',
  noteWhat_conflict_without_retry_after: 'Retry-After 없는 409 응답',
  noteWhat_replay_unmarked: 'Idempotent-Replayed: true 없는 재생',
  noteWhat_handler_failed: '핸들러가 500으로 답함(예외)',
  noteWhat_network_key_shared: '다른 고객의 결제가 결제망에서 같은 키를 만남',
  noteWhat_reordered_refused: '순서만 다른 같은 요청을 다른 요청으로 거절함',
  noteWhat_raw_bytes_fingerprint: '공백만 다른 같은 요청을 다른 요청으로 거절함',
  gradeTopNoted:
    '탐색기의 범위 안에서 규칙을 깨는 시나리오는 없지만, 위의 참고 사항이 아직 모자란 점을 말합니다. 아직 맨 위 단계에 이르지 못했습니다.',
  replayFound: '▶ 그 순서를 벤치에서 재생',
  played: '벤치에서 재생한 시나리오: “{scenario}”. 순서: {schedule}.',
  scheduleWords: '순서: {schedule}',
  traceHeading: '지금까지의 모든 스텝',
  gradeAll: '✓ 모든 시나리오 검사',
  scenario_simultaneous_retries: '같은 요청 두 개가 동시에',
  scenario_retry_after_lost_answer: '응답을 잃은 뒤의 재시도',
  scenario_retry_after_another_transfer: '다른 송금으로 잔액이 바뀐 뒤의 재시도',
  scenario_corrected_amount: '같은 키로 금액을 고친 요청',
  scenario_reordered_json: 'JSON 멤버 순서만 바뀐 재시도',
  scenario_another_customers_key: '같은 키를 쓰는 다른 고객',
  scenario_crash_at_every_step: '어느 스텝에서든 시도가 죽은 뒤의 재시도',
  scenario_crash_then_late_retry: '어느 스텝에서든 시도가 죽은 뒤, 10분 늦게 온 재시도',
  scenario_retry_after_retention: '클라이언트의 재시도 한 시간이 끝날 무렵의 재시도',
  scenario_three_retries: '같은 요청 세 개, 무작위 순서',
  scenario_other_customer_same_body: '같은 키로 같은 본문을 보내는 다른 고객',
  scenario_refusal_then_top_up: '잔액 부족, 입금, 그리고 재시도',
  scenario_unknown_payee_then_opened: '없는 받는 계좌, 계좌 개설, 그리고 재시도',
  scenario_reordered_after_answer: '응답을 받은 요청, 그리고 JSON 멤버 순서만 바뀐 재시도',
  scenario_missing_key: 'Idempotency-Key가 없는 요청, 그리고 응답을 잃은 뒤의 재시도',
  scenario_repaired_body: '400으로 거절된 본문, 그리고 같은 키로 고쳐 보낸 요청',
  scenario_repaired_auth: '고객 없이 보내 401로 거절된 송금, 그리고 같은 키로 고객을 밝혀 다시 보낸 요청',
  scenario_malformed_keys: '계약이 거절하는 키(따옴표 없는 토큰, 빈 문자열, 256자, ASCII 밖의 문자, 목록, 숫자, 매개변수)',
  scenario_longest_key: '정확히 255자인 올바른 키, 그리고 그 재시도',
  scenario_retry_three_ways: '응답을 받은 요청을 공백만 바꿔, 순서만 바꿔, 둘 다 바꿔 다시 보내기',
  scenario_day: '하루치 트래픽의 축소판: 고객 셋, 의도 여덟 개, 잃은 응답과 그 재시도',
  grading: '시나리오 {total}개 중 {n}번째 검사 중: {scenario}…',
  gradeHeading: '탐색기로 살펴본 모든 시나리오',
  gradeScenario: '시나리오',
  gradeResult: '탐색기가 찾은 것',
  gradeHeld: '{tried}가지 순서에서 깨지지 않음',
  gradeBroke: '{rules}: 깨짐({steps}스텝)',
  gradeBrokeLater: '{rules}: 깨짐({steps}스텝). 이 단계에서는 예상된 결과이며, 다음 단계들에서 고칩니다',
  gradeAlsoBroke: '다른 순서에서 깨진 규칙: {rule}({steps}스텝). 이 단계가 요구하는 규칙입니다.',
  gradeAlsoBrokeLater: '다른 순서에서 깨진 규칙: {rule}({steps}스텝). 이 단계에서는 예상된 결과입니다.',
  gradePlay: '▶ 이 순서로 보기',
  gradePlayThis: '▶ 이 줄의 순서로 보기',
  gradeNoted: '{tried}가지 순서에서 규칙은 깨지지 않았지만, 계약과 다른 응답이 있음',
  gradeNote: '계약과 다름: {says}',
  noteNeverSettled: '끝나지 않는 의도: {says}',
  gradeNotedSettle: '{tried}가지 순서에서 규칙은 깨지지 않았지만, 끝나지 않는 의도가 있음',
  gradeAnswers: '한 순서에서 받은 응답: {answers}',
  exploredNoted: '규칙은 깨지지 않았지만, 아래 참고 사항({n}개)이 바로잡을 점을 말합니다:',
  gradeCause: '무엇이 잘못됐나: {says}',
  gradeFix: '고칠 점: {fix}',
  gradeTop:
    '탐색기의 범위 안에서 규칙을 깨는 시나리오가 없습니다. 맨 위 6단계(범위와 보존 기간)가 지키는 것을 여러분의 핸들러도 지킵니다. 증명은 아니니 idemlab lab serve로 실행하고 idemlab grade로도 채점해 보세요.',
  gradeNext: '어딘가에서 깨진 규칙: {rules}. {one} 고치는 가장 앞 단계: {rung}.',
  oneOfThem: '그중 하나를',
  itAlone: '이 규칙을',
  rungDone: '✔ {rung} 통과: 모든 시나리오가 이 단계가 요구하는 것을 지킵니다.',
  rungDoneLater: '다음 단계들에서 고칠 규칙(깨졌거나, 7번은 알 수 없음): {rules}.',
  rungDoneLaterNote: '{rung}에서 고칠 것도 있습니다(아래 참고): {what}.',
  rungNextGoal: '다음 {rung}: {goal}',
  goToRung: '▶ {rung} 시작',
  rungDoneMark: '마지막 검사에서 통과',
  rungNotDone: '✘ 아직 통과하지 못한 단계: {rung}. 이 단계가 요구하는 규칙이 깨진 시나리오: {scenarios}(규칙 {rules}).',
  rungNotDone7: '✘ 아직 통과하지 못한 단계: {rung}. 이 단계는 retentionSeconds를 공개하라고 요구합니다(규칙 7).',
  rungNotDone7Short:
    '✘ 아직 통과하지 못한 단계: {rung}. 파일이 공개한 보존 기간이 클라이언트가 재시도하는 한 시간보다 길지 않습니다(규칙 7).',
  gradeBroken7:
    '규칙 7이 깨졌습니다: 파일이 공개한 보존 기간({seconds}초)이 클라이언트가 재시도하는 한 시간보다 길지 않습니다. 어느 순서에서나 똑같이 깨지므로, 탐색기는 이 규칙을 넘기고 순서가 깨뜨리는 다른 규칙을 찾습니다. 고칠 점: 키를 한 시간보다 오래 보존하고, 파일에서 그렇게 공개하세요(예: const retentionSeconds = 86400).',
  rungNotDoneNote: '✘ 아직 통과하지 못한 단계: {rung}. {what}: {scenarios}.',
  andMore: '{list} 외 {n}개',
  gradeUnknown7:
    '규칙 7은 알 수 없음: 파일이 retentionSeconds를 공개하지 않아, 키를 얼마나 보관하는지 어떤 클라이언트도 알 수 없습니다. idemlab grade는 이 규칙을 알 수 없음으로 두고, 공개할 때까지 통과시키지 않습니다(클라이언트의 재시도 한 시간보다 길게).',
  gradeTopUnknown:
    '탐색기의 범위 안에서 규칙을 깨는 시나리오는 없지만, 파일이 retentionSeconds를 공개할 때까지 규칙 7은 알 수 없습니다(6단계, 범위와 보존 기간).',

  goal_naive:
    '아직 할 일은 없습니다. 여기가 출발점입니다. 요청마다 돈이 이동하므로, 응답을 받지 못해 다시 보내는 클라이언트는 두 번 결제합니다. 핸들러를 읽고 다음 단계로 넘어가세요.',
  hints_naive: [
    'await 하나하나가 한 스텝입니다. 핸들러가 데이터베이스를 기다리는 동안 다른 시도가 실행될 수 있습니다.',
    '실습은 잔액과 결제망의 청구 기록으로 판정하며, 여러분의 테이블은 보지 않습니다.',
  ],
  goal_unique:
    'Idempotency-Key를 선점하세요. 키를 기본 키로 하는 키 테이블을 만들고, INSERT 한 번으로 선점합니다. 같은 키의 두 번째 INSERT는 실패해야 하며, 그 실패가 곧 판정입니다. 재시도는 돈을 옮기면 안 됩니다.',
  hints_unique: [
    '키는 lab.parseKey(req.key)로 읽습니다. 유효한 키가 없으면 아무것도 옮기기 전에 400으로 응답하세요.',
    '먼저 조회하고 나중에 삽입하지 마세요. 동시에 온 두 재시도가 모두 “없음”을 봅니다.',
    'INSERT OR IGNORE는 오류를 내지 않습니다. 변경된 행 수를 읽지 않으면 재시도가 새 요청처럼 보입니다.',
    '거부된 INSERT는 이름이 ConstraintError인 오류를 던집니다.',
    '이 단계에서는 반복된 요청에 무엇으로 응답할지 정해도 됩니다(이미 처리됐다고 알리는 200이면 충분합니다). 다음 단계들에서 그것을 첫 응답으로 바꿉니다.',
  ],
  goal_fingerprint:
    '같은 키로 온 재시도와 다른 요청을 구별하세요. 요청의 지문을 키와 함께 저장하고, 이미 쓴 키로 온 요청이 다르면 422로 응답합니다.',
  hints_fingerprint: [
    '같은 멤버를 다른 순서로 쓴 두 본문은 같은 요청입니다.',
    'lab.canonical과 lab.sha256을 쓰세요. 엔드포인트(메서드와 경로)를 정규화한 본문과 함께 해시합니다.',
  ],
  goal_in_progress:
    '첫 시도가 아직 실행 중일 때 도착한 재시도에 “완료”라고 답하면 안 됩니다. 키를 처리 중으로 선점하고, 그동안은 Retry-After와 함께 409로 응답하며, 돈을 옮기는 바로 그 트랜잭션에서 완료로 표시하세요.',
  hints_in_progress: [
    '송금과 완료 표시 사이에 시도가 죽으면 어떻게 될까요? 이것은 이 단계에서 풀 문제입니다. (선점과 송금 사이에 죽으면 선점이 처리 중으로 남는데, 이것은 마지막 단계에서 리스로 정리합니다.)',
    '거절(402, 404)도 응답입니다. 선점을 풀어야 하는 것은 예외가 났을 때뿐입니다.',
    'Retry-After는 초 단위 숫자입니다: Retry-After: 1.',
    '결제 호출은 트랜잭션 밖에 둡니다(다른 곳의 데이터베이스입니다). 완료 표시는 돈을 옮기는 트랜잭션 안에 넣습니다.',
  ],
  goal_replay:
    '재시도는 첫 응답을 바이트 하나까지 똑같이 받아야 합니다. 보낸 상태 코드와 헤더와 본문을 저장했다가 Idempotent-Replayed: true와 함께 다시 보내세요.',
  hints_replay: [
    '응답을 다시 만들면 첫 응답의 잔액과 시각이 아니라 지금의 잔액과 시각이 나갑니다.',
    '응답은 송금을 커밋하는 트랜잭션 안에서 저장하세요.',
  ],
  goal_scoped:
    '키는 고객의 것입니다. (고객, 엔드포인트, 키)로 범위를 나누고, 클라이언트가 재시도하는 기간보다 오래 보관하며(retentionSeconds로 공개), 결제망에도 키를 넘겨 같은 청구가 두 번 일어나지 않게 하세요. 선점마다 리스를 두어, 죽은 시도의 선점은 재시도가 넘겨받게 하세요.',
  hints_scoped: [
    '두 고객이 모두 order-1이라는 키를 쓸 수 있습니다.',
    '클라이언트는 한 시간 동안 재시도합니다. 보존 기간이 정확히 3600초면 부족합니다.',
    'pay({ …, key })는 같은 키가 다시 오면 첫 청구로 답합니다.',
    '엔드포인트는 메서드와 경로입니다. 예: POST /transfers.',
    '죽은 시도의 선점은 영원히 처리 중으로 남습니다. 리스보다 오래되면 넘겨받으세요(req.now, 소유자는 req.attempt). 넘겨받은 시도는 다시 결제할 수 있으니, 결제망에 키를 넘겨야 합니다.',
  ],
};

export const labMessages = { en, ko };

// plural is the English plural ending for a count: {s} in a sentence
// that names one rule or several ("rule 1", "rules 1, 3").
export const plural = (list) => (list.length === 1 ? '' : 's');

// lt returns the lab's word for key in lang (English when missing), with
// {name} placeholders filled from vars.
export function lt(lang, key, vars) {
  const table = labMessages[lang] || en;
  let s = table[key] ?? en[key] ?? key;
  if (vars && typeof s === 'string') s = s.replace(/\{(\w+)\}/g, (m, name) => (name in vars ? String(vars[name]) : m));
  return s;
}

// rungKey is the key of a rung's words: in-progress → in_progress.
export const rungKey = (rung) => rung.replace(/-/g, '_');

// rungWords names a rung in lang: its name ("키 선점"), its label in a
// sentence ("rung 2 (unique)") and its title ("Rung 2: unique").
export function rungWords(lang, rung) {
  const vars = { n: RUNGS.indexOf(rung) + 1, name: lt(lang, 'rungName_' + rungKey(rung)), id: rung };
  return { name: vars.name, label: lt(lang, 'rungLabel', vars), title: lt(lang, 'rungTitle', vars) };
}
