// words.js: every word the classroom's pages show, in English and Korean,
// chosen with ?lang=ko (kept for the next visit). An element with
// data-t="key" gets the word as its text; data-t-label="key" as its
// aria-label. A missing Korean word falls back to English. Placeholders are
// written {name} and filled by t(key, {name: value}).

const en = {
  classroom: "classroom",
  liveClassroom: "live classroom",
  offline: "offline",
  online: "online",
  reconnecting: "reconnecting…",
  gone: "no room",
  reconnectingBanner: "Reconnecting… The room is kept on the server; nothing is lost. This page keeps trying.",
  roomGone: "No room {code} here: the server has no room with that code. Check the code on the projector.",
  roomGoneProjector: "The server has no room {code}. Open a new one.",

  signinTitle: "Instructor sign-in",
  signinText: "Open the sign-in link that idemlab serve printed when it started (it works once), or type the instructor's secret. Students join with the room code instead.",
  secretLabel: "Instructor secret",
  signIn: "Sign in",
  signOut: "Sign out",
  lockRoom: "Lock the room",
  unlockRoom: "Unlock the room",
  lockedPill: "locked: no new students",
  kick: "Remove",
  lobbyTitle: "Open a room",
  lobbyText: "Students join from their phones with the room's code or its QR code. Each storm runs on a fresh ledger.",
  openRoom: "Open a room",
  openScreen: "Open the room's screen (for the projector) ↗",
  screenHelp: "Put that window on the projector; this page is your remote. It works on a phone too: sign in there with the same link.",

  joinAt: "Join at",
  withCode: "with the code",
  scanToJoin: "Scan to join",
  onlineCount: "{online} of {students} students online",
  noneYet: "Nobody has joined yet.",
  dropped: "{n} slow screens dropped",

  stormControls: "Storm controls",
  level: "Level",
  clients: "Clients",
  keys: "Keys",
  attemptsEach: "Attempts each",
  fault: "Fault",
  atPhase: "at phase",
  paymentCall: "Payment call (ms)",
  slowMotion: "Slow motion (ms per phase)",
  changeAmount: "retries carry a corrected amount",
  fire: "Fire storm",
  ask: "Ask the class",
  reveal: "Reveal votes",
  fresh: "Fresh ledger",
  faultsHelp: "client-timeout: the gateway gives up before the server finishes · lose-response: the load balancer cuts the answer · crash: the process dies before the phase · late-retry: the retry comes an hour later, after the short retention",

  prediction: "Prediction",
  noQuestion: "No question asked yet. Ask the class before a storm.",
  votingSoFar: "voting: {n} votes so far",
  votesCast: "{n} votes",
  votesLocked: "locked for this storm: {n} votes",
  whatHappened: "what happened",
  actualWas: "The second retry ({lane}) got: {answer}.",
  actualUnknown: "Reveal after the storm to see what happened.",
  yourVote: "Your vote: {choice}",
  votedRight: "You predicted it: {choice}.",
  votedWrong: "You said {choice}; it was {actual}.",
  votesLockedPhone: "The storm is running: your vote is locked.",

  choice_double: "charged twice (a second transfer)",
  "choice_201": "201, the first answer again: charged once",
  "choice_200": "200 “already processed”",
  "choice_409": "409: still in progress",
  "choice_422": "422: a different request",
  choice_none: "no answer",

  stage: "What happened",
  running: "running…",
  stormLabel: "storm: {clients} clients × {attempts} at {level}, fault {fault}",
  stormDone: "storm of {requests} requests at {level}, {ms} ms",
  levelLabel: "level {level}",
  interrupted: "The server stopped during this storm: what it recorded until then is drawn; it has no verdict.",
  rules: "Rules",
  balances: "Balances",
  keyTable: "Key table",
  students: "Students",
  away: "(away)",
  naiveNoKeys: "naive keeps no key table",
  noKeysYet: "no keys yet",
  stuckInProgress: "{n} key(s) stuck in_progress and nothing paid: the crash left a claim with no owner. Its lease is what frees it (scoped has one; this level has none).",
  picture: "The storm as a picture",
  pictureHelp: "Attempts over the storm's clock by outcome, and the money paid twice as it piles up. Choose a column to move the race to that moment.",

  tile_duplicates: "duplicates",
  tile_paidTwice: "paid twice",
  tile_409: "409s",
  tile_422: "422s",
  tile_replays: "replays",
  tile_lost: "lost answers",
  tile_transfers: "transfers",
  tile_moved: "money moved",
  tile_liveDup: "duplicates so far",
  tile_crashed: "crashed",

  // The phone.
  roomCode: "Room code",
  nickname: "Nickname",
  join: "Join",
  youAre: "You are",
  inRoom: "in room",
  atLevel: "level",
  send: "Send transfer",
  sendAgain: "Send again (retry)",
  basement: "Basement: lose the answer",
  pressToSend: "Press the button to send 10,000 won from alice to bob.",
  sending: "Sending…",
  yourAttempts: "Your attempts",
  roomStorm: "The whole room's last storm",
  noStormHere: "No storm recorded on this phone yet.",
  chargedTwice: "✘ Charged {times}: {amount} won left your account {n} times for one transfer.",
  twice: "twice",
  nTimes: "{n} times",
  chargedOnce: "✔ Charged once: {amount} won, with {answer}.",
  replayedOnce: "✔ Replayed: the server gave your first answer again ({status}); charged once.",
  noAnswer: "No answer (attempt {n}). Did the money move? You cannot know.",
  noAnswerNaive: "Press again: naive ignores the key, so it is a new request.",
  noAnswerRetry: "Press again to retry with the same key.",
  inProgress409: "409: your first attempt is still being processed. Press again to retry.",
  refused: "Refused ({status}): {summary}",
  alreadyProcessed: "“Already processed” (200), but the answer has no transfer in it: you cannot tell what happened to your money.",
  roomVerdict: "The room's storm: {verdict}",
  verdictPaidTwice: "{n} duplicate transfers, {amount} won paid twice",
  verdictHeld: "every rule held: each wish paid once",
  verdictNoPay: "nothing was paid twice, but {n} wish(es) were never paid",
};

const ko = {
  classroom: "교실",
  liveClassroom: "라이브 교실",
  offline: "오프라인",
  online: "연결됨",
  reconnecting: "다시 연결 중…",
  gone: "방 없음",
  reconnectingBanner: "다시 연결하는 중… 방은 서버에 그대로 있고 잃은 것은 없습니다. 이 페이지가 계속 시도합니다.",
  roomGone: "{code} 방이 없습니다: 서버에 그 코드의 방이 없습니다. 프로젝터의 코드를 확인하세요.",
  roomGoneProjector: "서버에 {code} 방이 없습니다. 새 방을 여세요.",

  signinTitle: "강사 로그인",
  signinText: "idemlab serve가 시작할 때 출력한 로그인 링크를 여세요(한 번만 쓸 수 있습니다). 또는 강사 비밀을 입력하세요. 학생은 방 코드로 들어옵니다.",
  secretLabel: "강사 비밀",
  signIn: "로그인",
  signOut: "로그아웃",
  lockRoom: "방 잠그기",
  unlockRoom: "방 잠금 풀기",
  lockedPill: "잠김: 새 학생을 받지 않음",
  kick: "내보내기",
  lobbyTitle: "방 열기",
  lobbyText: "학생은 휴대폰에서 방 코드나 QR 코드로 들어옵니다. 폭풍마다 새 원장에서 실행됩니다.",
  openRoom: "방 열기",
  openScreen: "방 화면 열기 (프로젝터용) ↗",
  screenHelp: "그 창을 프로젝터에 띄우세요. 이 페이지는 리모컨입니다. 휴대폰에서도 같은 링크로 로그인하면 됩니다.",

  joinAt: "접속 주소",
  withCode: "방 코드",
  scanToJoin: "스캔해서 참여",
  onlineCount: "학생 {students}명 중 {online}명 접속 중",
  noneYet: "아직 아무도 들어오지 않았습니다.",
  dropped: "느린 화면 {n}개 끊김",

  stormControls: "폭풍 설정",
  level: "단계",
  clients: "클라이언트 수",
  keys: "키 수",
  attemptsEach: "클라이언트당 시도",
  fault: "장애",
  atPhase: "발생 단계",
  paymentCall: "결제망 호출 (ms)",
  slowMotion: "슬로 모션 (단계당 ms)",
  changeAmount: "재시도에 고친 금액을 싣기",
  fire: "폭풍 보내기",
  ask: "반에 묻기",
  reveal: "투표 공개",
  fresh: "새 원장",
  faultsHelp: "client-timeout: 서버가 끝내기 전에 게이트웨이가 포기함 · lose-response: 로드 밸런서가 응답을 끊음 · crash: 그 단계 직전에 프로세스가 죽음 · late-retry: 짧은 보존 기간이 지난 한 시간 뒤에 재시도가 옴",

  prediction: "예측",
  noQuestion: "아직 질문이 없습니다. 폭풍 전에 반에 물어보세요.",
  votingSoFar: "투표 중: 지금까지 {n}표",
  votesCast: "{n}표",
  votesLocked: "이 폭풍에 대해 마감: {n}표",
  whatHappened: "실제 결과",
  actualWas: "두 번째 재시도({lane})가 받은 것: {answer}.",
  actualUnknown: "폭풍이 끝난 뒤 공개하면 실제 결과가 보입니다.",
  yourVote: "내 투표: {choice}",
  votedRight: "맞혔습니다: {choice}.",
  votedWrong: "{choice}라고 했지만 실제로는 {actual}였습니다.",
  votesLockedPhone: "폭풍이 진행 중입니다: 투표가 마감되었습니다.",

  choice_double: "두 번 결제됨 (두 번째 이체)",
  "choice_201": "201, 처음 응답 그대로: 한 번 결제",
  "choice_200": "200 “이미 처리됨”",
  "choice_409": "409: 아직 처리 중",
  "choice_422": "422: 다른 요청",
  choice_none: "응답 없음",

  stage: "무슨 일이 있었나",
  running: "실행 중…",
  stormLabel: "폭풍: 클라이언트 {clients}개 × {attempts}회, 단계 {level}, 장애 {fault}",
  stormDone: "요청 {requests}개의 폭풍, 단계 {level}, {ms} ms",
  levelLabel: "단계 {level}",
  interrupted: "이 폭풍 도중 서버가 멈췄습니다: 그때까지 기록된 것만 그렸고 판정은 없습니다.",
  rules: "규칙",
  balances: "잔액",
  keyTable: "키 테이블",
  students: "학생",
  away: "(자리 비움)",
  naiveNoKeys: "naive는 키 테이블이 없습니다",
  noKeysYet: "아직 키가 없습니다",
  stuckInProgress: "키 {n}개가 in_progress에 묶였고 결제된 것은 없습니다: 크래시가 주인 없는 선점을 남겼습니다. 이를 풀어 주는 것은 리스입니다 (scoped에는 있고 이 단계에는 없습니다).",
  picture: "한눈에 보는 폭풍",
  pictureHelp: "폭풍의 시계 위에 결과별 시도와, 쌓여 가는 이중 결제 금액. 열을 고르면 그 순간으로 경주 화면이 이동합니다.",

  tile_duplicates: "중복 이체",
  tile_paidTwice: "이중 결제",
  tile_409: "409",
  tile_422: "422",
  tile_replays: "재생",
  tile_lost: "잃은 응답",
  tile_transfers: "이체",
  tile_moved: "옮겨진 돈",
  tile_liveDup: "지금까지 중복",
  tile_crashed: "크래시",

  roomCode: "방 코드",
  nickname: "닉네임",
  join: "참여",
  youAre: "나:",
  inRoom: "방",
  atLevel: "단계",
  send: "이체 보내기",
  sendAgain: "다시 보내기 (재시도)",
  basement: "지하실: 응답 잃기",
  pressToSend: "버튼을 누르면 alice가 bob에게 10,000원을 보냅니다.",
  sending: "보내는 중…",
  yourAttempts: "내 시도",
  roomStorm: "방 전체의 마지막 폭풍",
  noStormHere: "이 휴대폰에는 아직 기록된 폭풍이 없습니다.",
  chargedTwice: "✘ {times} 결제됨: 이체 한 번에 {amount}원이 내 계좌에서 {n}번 빠져나갔습니다.",
  twice: "두 번",
  nTimes: "{n}번",
  chargedOnce: "✔ 한 번 결제됨: {amount}원, 응답 {answer}.",
  replayedOnce: "✔ 재생됨: 서버가 처음 응답({status})을 그대로 돌려주었습니다. 한 번만 결제되었습니다.",
  noAnswer: "응답 없음 (시도 {n}). 돈이 옮겨졌을까요? 알 수 없습니다.",
  noAnswerNaive: "다시 누르세요: naive는 키를 무시하므로 새 요청이 됩니다.",
  noAnswerRetry: "다시 눌러 같은 키로 재시도하세요.",
  inProgress409: "409: 첫 시도가 아직 처리 중입니다. 다시 눌러 재시도하세요.",
  refused: "거절됨 ({status}): {summary}",
  alreadyProcessed: "“이미 처리됨”(200)이지만 응답에 이체가 없습니다: 내 돈이 어떻게 되었는지 알 수 없습니다.",
  roomVerdict: "방의 폭풍: {verdict}",
  verdictPaidTwice: "중복 이체 {n}건, {amount}원 이중 결제",
  verdictHeld: "모든 규칙 통과: 소원마다 한 번씩 결제",
  verdictNoPay: "이중 결제는 없지만 결제되지 않은 소원이 {n}개",
};

const tables = { en, ko };

/** lang is the page's language: ?lang=, else the last one chosen, else English. */
export const lang = (() => {
  let l = new URLSearchParams(location.search).get("lang");
  try {
    if (l && tables[l]) localStorage.setItem("idemlab.lang", l);
    else l = localStorage.getItem("idemlab.lang");
  } catch {
    // storage refused (private mode): the URL alone decides
  }
  return tables[l] ? l : "en";
})();

/** t is the word for key in the page's language, placeholders filled. */
export function t(key, vars) {
  let s = (tables[lang] && tables[lang][key]) || en[key] || key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  return s;
}

/** choiceWord is a vote answer in words. */
export function choiceWord(c) {
  return t("choice_" + c);
}

/** translatePage sets the page's language and its marked words. */
export function translatePage(root = document) {
  document.documentElement.lang = lang;
  for (const n of root.querySelectorAll("[data-t]")) n.textContent = t(n.dataset.t);
  for (const n of root.querySelectorAll("[data-t-label]")) n.setAttribute("aria-label", t(n.dataset.tLabel));
}
