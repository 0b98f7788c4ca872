// words.js: every word the classroom's pages show, in English and Korean,
// chosen with ?lang=ko (kept for the next visit). An element with
// data-t="key" gets the word as its text; data-t-label="key" as its
// aria-label. A missing Korean word falls back to English. Placeholders are
// written {name} and filled by t(key, {name: value}).

const en = {
  classroom: 'classroom',
  liveClassroom: 'live classroom',
  offline: 'offline',
  online: 'online',
  reconnecting: 'reconnecting…',
  gone: 'no room',
  reconnectingBanner: 'Reconnecting… The room is kept on the server; nothing is lost. This page keeps trying.',
  refusedPill: 'waiting to get in',
  refused_full:
    'The room is full: it has as many students as the instructor set. This phone asks again every {wait} s and gets in as soon as the instructor makes room.',
  refused_locked: 'The instructor has locked the room. This phone asks again every {wait} s and gets in once it is unlocked.',
  refused_paced: "Too many new students joined from this network just now (a school's Wi-Fi shares one address).",
  refused_network: "Too many connections from this network at once (a school's Wi-Fi shares one address).",
  refused_codes: 'Too many room codes that open no room were tried from this network. Check the code on the projector.',
  refused_kicked: 'The instructor removed you from this room.',
  refused_replaced: 'You joined this room from another page or tab, so this one stopped. Reload it to come back here.',
  tryingIn: 'Trying again in {n} s.',
  roomGone: 'No room {code} here: the server has no room with that code. Check the code on the projector.',
  roomGoneProjector: 'The server has no room {code}. Open a new one.',

  signinTitle: 'Instructor sign-in',
  signinText:
    "Open the sign-in link that idemlab serve printed when it started (it works once), or type the instructor's secret. Students join with the room code instead.",
  secretLabel: 'Instructor secret',
  signIn: 'Sign in',
  signOut: 'Sign out',
  lockRoom: 'Lock the room',
  unlockRoom: 'Unlock the room',
  lockedPill: 'locked: no new students',
  classSize: 'Class size',
  setSize: 'Set',
  makeRoom: 'Let them in',
  refusedCount: 'Turned away in the last minute:',
  refusedBy_full: '{n} room full',
  refusedBy_locked: '{n} room locked',
  refusedBy_paced: '{n} too many new students from one network',
  refusedBy_network: '{n} too many connections from one network',
  kick: 'Remove',
  lobbyTitle: 'Open a room',
  lobbyText: "Students join from their phones with the room's code or its QR code. Each storm runs on a fresh ledger.",
  openRoom: 'Open a room',
  openScreen: "Open the room's screen (for the projector) ↗",
  screenHelp: 'Put that window on the projector; this page is your remote. It works on a phone too: sign in there with the same link.',

  joinAt: 'Join at',
  withCode: 'with the code',
  scanToJoin: 'Scan to join',
  onlineCount: '{online} of {students} students online',
  noneYet: 'Nobody has joined yet.',
  dropped: '{n} slow screens dropped',

  stormControls: 'Storm controls',
  level: 'Level',
  clients: 'Clients',
  keys: 'Keys',
  attemptsEach: 'Attempts each',
  fault: 'Fault',
  atPhase: 'at phase',
  paymentCall: 'Payment call (ms)',
  slowMotion: 'Slow motion (ms per phase)',
  changeAmount: 'retries carry a corrected amount',
  fire: 'Fire storm',
  ask: 'Ask the class',
  reveal: 'Reveal votes',
  fresh: 'Fresh ledger',
  faultsHelp:
    'client-timeout: the gateway gives up before the server finishes · lose-response: the load balancer cuts the answer · crash: the process dies before the phase · late-retry: the retry comes an hour later, after the short retention',

  prediction: 'Prediction',
  question: "The first attempt's answer is lost and the client sends it again. What will the second retry get?",
  requestsN: '{n} requests',
  unrecordedCounted: '({n} events not recorded, all counted)',
  noQuestion: 'No question asked yet. Ask the class before a storm.',
  votingSoFar: 'voting: {n} votes so far',
  votesCast: '{n} votes',
  votesLocked: 'locked for this storm: {n} votes',
  whatHappened: 'what happened',
  actualWas: 'The second retry ({lane}) got: {answer}.',
  actualUnknown: 'Reveal after the storm to see what happened.',
  yourVote: 'Your vote: {choice}',
  votedRight: 'You predicted it: {choice}.',
  votedWrong: 'You said {choice}; it was {actual}.',
  votesLockedPhone: 'The storm is running: your vote is locked.',

  choice_double: 'charged twice (a second transfer)',
  choice_201: '201, the first answer again: charged once',
  choice_200: '200 “already processed”',
  choice_409: '409: still in progress',
  choice_422: '422: a different request',
  choice_none: 'no answer',

  playBtn: '▶ Play',
  pauseBtn: '❚❚ Pause',
  replayBtn: '⟲ Replay',
  speed: 'speed',
  saveSVG: '⤓ Save as SVG',
  playerKeys: 'Space: pause or play · ← →: one event · Home: back to the start · the row counts open with “show all”',
  oneBack: 'One event back',
  oneForward: 'One event forward',
  position: 'event {n} of {total}',
  replayAt: 'replay at {speed}×',
  pausedWord: 'paused',
  unrecorded: '({n} more not recorded)',
  ledgerN: 'ledger {n}',
  stage: 'What happened',
  running: 'running…',
  stormLabel: 'storm: {clients} clients × {attempts} at {level}, fault {fault}',
  stormDone: 'storm of {requests} requests at {level}, {ms} ms',
  levelLabel: 'level {level}',
  interrupted: 'The server stopped during this storm: what it recorded until then is drawn; it has no verdict.',
  rules: 'Rules',
  moreLikeIt: ' (and {n} more like it)',
  amountWon: '{n} won',
  colAccount: 'account',
  colBalance: 'balance',
  balances: 'Balances',
  keyTable: 'Key table',
  students: 'Students',
  away: '(away)',
  naiveNoKeys: 'naive keeps no key table',
  noKeysYet: 'no keys yet',
  stuckInProgress:
    '{n} key(s) stuck in_progress and nothing paid: the crash left a claim with no owner. Its lease is what frees it (scoped has one; this level has none).',
  picture: 'The storm as a picture',
  pictureHelp:
    "Attempts over the storm's clock by outcome, and the money moved more than once as it piles up. Choose a column to move the race to that moment.",

  tile_409: '409s',
  tile_422: '422s',
  tile_replays: 'replays',
  tile_replays_one: 'replay',
  tile_lost: 'lost answers',
  tile_lost_one: 'lost answer',
  tile_transfers: 'transfers',
  tile_transfers_one: 'transfer',
  tile_moved: 'money moved',
  tallyNow: 'Up to event {n}, the moment shown:',
  tile_liveDup: 'extra transfers so far',
  tile_liveDup_one: 'extra transfer so far',
  tile_crashed: 'crashed',

  // The phone.
  roomCode: 'Room code',
  nickname: 'Nickname',
  join: 'Join',
  youAre: 'You are',
  inRoom: 'in room',
  atLevel: 'level',
  send: 'Send transfer',
  sendAgain: 'Send again (retry)',
  basement: 'Basement: lose the answer',
  pressToSend: 'Press the button to send 10,000 won from alice to bob.',
  sending: 'Sending…',
  yourAttempts: 'Your attempts',
  roomStorm: "The whole room's last storm",
  noStormHere: 'No storm recorded on this phone yet.',
  chargedTwice: '✘ Charged {times}: {amount} won left your account {n} times for one transfer.',
  twice: 'twice',
  nTimes: '{n} times',
  chargedOnce: '✔ Charged once: {amount} won, with {answer}.',
  replayedOnce: '✔ Replayed: the server gave your first answer again ({status}); charged once.',
  noAnswer: 'No answer (attempt {n}). Did the money move? You cannot know.',
  noAnswerNaive: 'Press again: naive ignores the key, so it is a new request.',
  noAnswerRetry: 'Press again to retry with the same key.',
  inProgress409: '409: your first attempt is still being processed. Press again to retry.',
  refused: 'Refused ({status}): {summary}',
  alreadyProcessed: '“Already processed” (200), but the answer has no transfer in it: you cannot tell what happened to your money.',
  roomVerdict: "The room's storm: {verdict}",
  verdictHeld: 'every rule held: each wish paid once',
  verdictNoPay: 'no money moved more than once, but {n} wish(es) were never carried out',
};

const ko = {
  classroom: '교실',
  liveClassroom: '라이브 교실',
  offline: '오프라인',
  online: '연결됨',
  reconnecting: '다시 연결 중…',
  gone: '방 없음',
  reconnectingBanner: '다시 연결하는 중… 방은 서버에 그대로 있고 잃은 것은 없습니다. 이 페이지가 계속 시도합니다.',
  refusedPill: '입장 대기 중',
  refused_full:
    '방이 꽉 찼습니다. 강사가 정한 인원만큼 학생이 이미 들어와 있어요. 이 휴대폰은 {wait}초마다 다시 요청하고, 강사가 자리를 만들면 바로 들어갑니다.',
  refused_locked: '강사가 방을 잠갔습니다. 이 휴대폰은 {wait}초마다 다시 요청하고, 잠금이 풀리면 들어갑니다.',
  refused_paced: '방금 이 네트워크에서 새 학생이 너무 많이 들어왔습니다. 학교 와이파이는 모두 주소 하나를 함께 쓰거든요.',
  refused_network: '이 네트워크에서 한꺼번에 너무 많이 연결했습니다. 학교 와이파이는 모두 주소 하나를 함께 쓰거든요.',
  refused_codes: '이 네트워크에서 없는 방 코드를 너무 많이 입력했습니다. 프로젝터에 나온 코드를 확인하세요.',
  refused_kicked: '강사가 이 방에서 내보냈습니다.',
  refused_replaced: '다른 페이지나 탭에서 이 방에 들어가서 이 페이지는 멈췄습니다. 여기로 돌아오려면 새로 고침하세요.',
  tryingIn: '{n}초 뒤에 다시 시도합니다.',
  roomGone: '{code} 방이 없습니다: 서버에 그 코드의 방이 없습니다. 프로젝터의 코드를 확인하세요.',
  roomGoneProjector: '서버에 {code} 방이 없습니다. 새 방을 여세요.',

  signinTitle: '강사 로그인',
  signinText:
    'idemlab serve가 시작할 때 출력한 로그인 링크를 여세요(한 번만 쓸 수 있습니다). 또는 강사 비밀을 입력하세요. 학생은 방 코드로 들어옵니다.',
  secretLabel: '강사 비밀',
  signIn: '로그인',
  signOut: '로그아웃',
  lockRoom: '방 잠그기',
  classSize: '수업 인원',
  setSize: '정하기',
  makeRoom: '들여보내기',
  refusedCount: '지난 1분 동안 들어오지 못한 휴대폰:',
  refusedBy_full: '방이 꽉 참 {n}',
  refusedBy_locked: '방 잠김 {n}',
  refusedBy_paced: '한 네트워크에서 새 학생이 너무 많음 {n}',
  refusedBy_network: '한 네트워크에서 연결이 너무 많음 {n}',
  unlockRoom: '방 잠금 풀기',
  lockedPill: '잠김: 새 학생을 받지 않음',
  kick: '내보내기',
  lobbyTitle: '방 열기',
  lobbyText: '학생은 휴대폰에서 방 코드나 QR 코드로 들어옵니다. 폭풍마다 새 원장에서 실행됩니다.',
  openRoom: '방 열기',
  openScreen: '방 화면 열기 (프로젝터용) ↗',
  screenHelp: '그 창을 프로젝터에 띄우세요. 이 페이지는 리모컨입니다. 휴대폰에서도 같은 링크로 로그인하면 됩니다.',

  joinAt: '접속 주소',
  withCode: '방 코드',
  scanToJoin: '스캔해서 참여',
  onlineCount: '학생 {students}명 중 {online}명 접속 중',
  noneYet: '아직 아무도 들어오지 않았습니다.',
  dropped: '느린 화면 {n}개 끊김',

  stormControls: '폭풍 설정',
  level: '단계',
  clients: '클라이언트 수',
  keys: '키 수',
  attemptsEach: '클라이언트당 시도',
  fault: '장애',
  atPhase: '발생 스텝',
  paymentCall: '결제망 호출 (ms)',
  slowMotion: '슬로 모션 (스텝당 ms)',
  changeAmount: '재시도에 고친 금액을 싣기',
  fire: '폭풍 보내기',
  ask: '반에 묻기',
  reveal: '투표 공개',
  fresh: '새 원장',
  faultsHelp:
    'client-timeout: 서버가 끝내기 전에 게이트웨이가 포기함 · lose-response: 로드 밸런서가 응답을 끊음 · crash: 그 스텝 직전에 프로세스가 죽음 · late-retry: 짧은 보존 기간이 지난 한 시간 뒤에 재시도가 옴',

  prediction: '예측',
  question: '첫 시도의 응답이 사라져 클라이언트가 다시 보냅니다. 두 번째 재시도는 무엇을 받을까요?',
  requestsN: '요청 {n}개',
  unrecordedCounted: '(기록되지 않은 사건 {n}개, 모두 집계됨)',
  noQuestion: '아직 질문이 없습니다. 폭풍 전에 반에 물어보세요.',
  votingSoFar: '투표 중: 지금까지 {n}표',
  votesCast: '{n}표',
  votesLocked: '이 폭풍에 대해 마감: {n}표',
  whatHappened: '실제 결과',
  actualWas: '두 번째 재시도({lane})가 받은 것: {answer}.',
  actualUnknown: '폭풍이 끝난 뒤 공개하면 실제 결과가 보입니다.',
  yourVote: '내 투표: {choice}',
  votedRight: '맞혔습니다: {choice}.',
  votedWrong: '내 답: {choice}. 실제로 일어난 일: {actual}.',
  votesLockedPhone: '폭풍이 진행 중입니다: 투표가 마감되었습니다.',

  choice_double: '두 번 결제됨 (두 번째 송금)',
  choice_201: '201, 처음 응답 그대로: 한 번 결제',
  choice_200: '200 “이미 처리됨”',
  choice_409: '409: 아직 처리 중',
  choice_422: '422: 다른 요청',
  choice_none: '응답 없음',

  playBtn: '▶ 재생',
  pauseBtn: '❚❚ 일시정지',
  replayBtn: '⟲ 처음부터',
  speed: '속도',
  saveSVG: '⤓ SVG로 저장',
  playerKeys: 'Space: 일시정지/재생 · ← →: 사건 하나씩 · Home: 처음으로 · 묶인 행은 “모두 보기”로 펼칩니다',
  oneBack: '사건 하나 뒤로',
  oneForward: '사건 하나 앞으로',
  position: '사건 {n} / {total}',
  replayAt: '{speed}배속 재생',
  pausedWord: '일시정지',
  unrecorded: '(기록되지 않은 {n}개 더)',
  ledgerN: '원장 {n}',
  stage: '무슨 일이 있었나',
  running: '실행 중…',
  stormLabel: '폭풍: 클라이언트 {clients}개 × {attempts}회, 단계 {level}, 장애 {fault}',
  stormDone: '요청 {requests}개의 폭풍, 단계 {level}, {ms} ms',
  levelLabel: '단계 {level}',
  interrupted: '이 폭풍 도중 서버가 멈췄습니다: 그때까지 기록된 것만 그렸고 판정은 없습니다.',
  rules: '규칙',
  moreLikeIt: ' (같은 위반 {n}건 더)',
  amountWon: '{n}원',
  colAccount: '계좌',
  colBalance: '잔액',
  balances: '잔액',
  keyTable: '키 테이블',
  students: '학생',
  away: '(자리 비움)',
  naiveNoKeys: 'naive는 키 테이블이 없습니다',
  noKeysYet: '아직 키가 없습니다',
  stuckInProgress:
    '키 {n}개가 in_progress에 묶였고 결제된 것은 없습니다: 크래시가 주인 없는 선점을 남겼습니다. 이를 풀어 주는 것은 리스입니다 (scoped에는 있고 이 단계에는 없습니다).',
  picture: '한눈에 보는 폭풍',
  pictureHelp: '폭풍의 시계 위에 결과별 시도와, 쌓여 가는 더 나간 돈. 열을 고르면 타임라인이 그 순간으로 이동합니다.',

  tile_409: '409',
  tile_422: '422',
  tile_replays: '재생',
  tile_lost: '잃은 응답',
  tile_transfers: '송금',
  tile_moved: '옮겨진 돈',
  tallyNow: '보이는 순간(이벤트 {n})까지:',
  tile_liveDup: '지금까지 추가 송금',
  tile_crashed: '크래시',

  roomCode: '방 코드',
  nickname: '닉네임',
  join: '참여',
  youAre: '나:',
  inRoom: '방',
  atLevel: '단계',
  send: '송금하기',
  sendAgain: '다시 보내기 (재시도)',
  basement: '지하실: 응답 잃기',
  pressToSend: '버튼을 누르면 alice가 bob에게 10,000원을 보냅니다.',
  sending: '보내는 중…',
  yourAttempts: '내 시도',
  roomStorm: '방 전체의 마지막 폭풍',
  noStormHere: '이 휴대폰에는 아직 기록된 폭풍이 없습니다.',
  chargedTwice: '✘ {times} 결제됨: 송금 한 번에 {amount}원이 내 계좌에서 {n}번 빠져나갔습니다.',
  twice: '두 번',
  nTimes: '{n}번',
  chargedOnce: '✔ 한 번 결제됨: {amount}원, 응답 {answer}.',
  replayedOnce: '✔ 재생됨: 서버가 처음 응답({status})을 그대로 돌려주었습니다. 한 번만 결제되었습니다.',
  noAnswer: '응답 없음 (시도 {n}). 돈이 옮겨졌을까요? 알 수 없습니다.',
  noAnswerNaive: '다시 누르세요: naive는 키를 무시하므로 새 요청이 됩니다.',
  noAnswerRetry: '다시 눌러 같은 키로 재시도하세요.',
  inProgress409: '409: 첫 시도가 아직 처리 중입니다. 다시 눌러 재시도하세요.',
  refused: '거절됨 ({status}): {summary}',
  alreadyProcessed: '“이미 처리됨”(200)이지만 응답에 송금이 없습니다: 내 돈이 어떻게 되었는지 알 수 없습니다.',
  roomVerdict: '방의 폭풍: {verdict}',
  verdictHeld: '모든 규칙 통과: 의도마다 한 번씩 결제',
  verdictNoPay: '더 나간 돈은 없지만 결제되지 않은 의도가 {n}개',
};

const tables = { en, ko };

/** lang is the page's language: ?lang=, else the last one chosen, else English. */
export const lang = (() => {
  let l = new URLSearchParams(location.search).get('lang');
  try {
    if (l && tables[l]) localStorage.setItem('idemlab.lang', l);
    else l = localStorage.getItem('idemlab.lang');
  } catch {
    // storage refused (private mode): the URL alone decides
  }
  return tables[l] ? l : 'en';
})();

/** t is the word for key in the page's language, placeholders filled. */
export function t(key, vars) {
  let s = (tables[lang] && tables[lang][key]) || en[key] || key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  return s;
}

/**
 * tileWord is a count's label, for one when the count is one
 * ("1 replay", not "1 replays"): key + '_one' where the page's language
 * has it, the plural otherwise (Korean has one form).
 */
export function tileWord(key, n) {
  const one = key + '_one';
  return n === 1 && tables[lang] && tables[lang][one] ? tables[lang][one] : t(key);
}

/** choiceWord is a vote answer in words. */
export function choiceWord(c) {
  return t('choice_' + c);
}

/** translatePage sets the page's language and its marked words. */
export function translatePage(root = document) {
  document.documentElement.lang = lang;
  for (const n of root.querySelectorAll('[data-t]')) n.textContent = t(n.dataset.t);
  for (const n of root.querySelectorAll('[data-t-label]')) n.setAttribute('aria-label', t(n.dataset.tLabel));
}
