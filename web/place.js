// place.js keeps where the learner is: the place on the bench in the URL,
// and the goals met in localStorage.
//
// The URL holds #lesson=ID&s=SCENARIO&m=MOVES&p=POLICY, where MOVES is a
// comma-separated list of lane ids ("A1" = step lane A1, "A1!crash" =
// inject that fault at A1's next phase) replayed on load, and POLICY the
// sandbox's knob overrides as JSON. Progress (the goals met) is kept under
// "idemlab.progress.v1".

const PROGRESS_KEY = 'idemlab.progress.v1';

/** readHash reads the place from the URL. */
export function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  let override = null;
  if (p.get('p')) {
    try {
      override = JSON.parse(p.get('p'));
    } catch {
      override = null;
    }
  }
  return { lesson: p.get('lesson'), scenario: p.get('s'), moves: (p.get('m') || '').split(',').filter(Boolean), override };
}

// hashOf writes a place as the URL's hash. Commas and bangs stay
// readable: the moves read "A1,A2,A1!crash".
function hashOf(place) {
  const p = new URLSearchParams();
  if (place.lesson) p.set('lesson', place.lesson);
  if (place.scenario) p.set('s', place.scenario);
  if (place.moves && place.moves.length) p.set('m', place.moves.join(','));
  if (place.override && Object.keys(place.override).length) p.set('p', JSON.stringify(place.override));
  return '#' + p.toString().replace(/%2C/gi, ',').replace(/%21/g, '!');
}

// hashWriter returns the page's URL writer; place() says where the learner
// is now ({lesson, scenario, moves, override}).
//
// write updates the URL a moment after the last change: Chromium takes a
// noticeable time per history.replaceState (measured here: most of a
// step's drawing time), so a burst of steps writes it once; writeNow
// writes at once (before the page unloads).
//
// The writer remembers the hash it last wrote or adopted. A hash that
// differs from it was put there by the learner (a pasted link): a write
// still pending then must not overwrite it. Without this check, a link
// pasted within 250 ms of a step was replaced by the old place before its
// hashchange was handled, and the player opened the old place again.
// adopt takes the learner's hash as the page's own, when hashchange opens
// it, and holds every write until release: the player opens the link after
// the actions already queued, and one of those finishing must not write
// its old place over the link meanwhile. release is called once the
// player's place is the link's.
export function hashWriter(place) {
  let timer = 0;
  let own = location.hash;
  let held = false;
  const writeNow = () => {
    clearTimeout(timer);
    document.body.dataset.urlPending = 'false';
    if (held || location.hash !== own) return; // the learner's link wins; hashchange opens it
    const hash = hashOf(place());
    if (location.hash !== hash) history.replaceState(null, '', hash);
    own = location.hash;
  };
  return {
    write() {
      clearTimeout(timer);
      document.body.dataset.urlPending = 'true';
      timer = setTimeout(writeNow, 250);
    },
    writeNow,
    adopt() {
      clearTimeout(timer);
      document.body.dataset.urlPending = 'false';
      own = location.hash;
      held = true;
    },
    release() {
      held = false;
    },
  };
}

/** loadProgress returns {lessonId: {"scenario/goal": true, done: true}}. */
export function loadProgress() {
  try {
    return JSON.parse(localStorage.getItem(PROGRESS_KEY)) || {};
  } catch {
    return {};
  }
}

function storeProgress(progress) {
  try {
    localStorage.setItem(PROGRESS_KEY, JSON.stringify(progress));
  } catch {
    // Private windows may refuse storage; progress then lasts the visit.
  }
}

/** saveGoals records the goals met (as the engine judged them); true when something new was met. */
export function saveGoals(lessonId, scenarioId, goals) {
  const progress = loadProgress();
  const mine = progress[lessonId] || {};
  let changed = false;
  for (const g of goals || []) {
    const k = scenarioId + '/' + g.id;
    if (g.met && !mine[k]) {
      mine[k] = true;
      changed = true;
    }
  }
  if (!changed) return false;
  progress[lessonId] = mine;
  storeProgress(progress);
  return true;
}

/** markDone records that every goal of a lesson is met. */
export function markDone(lessonId) {
  const progress = loadProgress();
  if ((progress[lessonId] || {}).done) return;
  progress[lessonId] = Object.assign(progress[lessonId] || {}, { done: true });
  storeProgress(progress);
}

/** lessonGoals lists a lesson's goals, each with its scenario. */
export function lessonGoals(lesson) {
  if (lesson.goals && lesson.goals.length) return lesson.goals;
  const out = [];
  for (const s of lesson.scenarios || []) for (const g of s.goals || []) out.push(Object.assign({ scenario: s.id }, g));
  return out;
}

/** goalMet reports whether the learner has met a lesson's goal. */
export function goalMet(lessonId, g) {
  const mine = loadProgress()[lessonId] || {};
  return !!mine[(g.scenario || '') + '/' + g.id];
}

/** lessonDone reports whether a lesson is done; current is the lesson shown, whose goals are known. */
export function lessonDone(id, current) {
  const mine = loadProgress()[id];
  if (!mine) return false;
  if (current && current.id === id) {
    const goals = lessonGoals(current);
    return goals.length > 0 && goals.every((g) => goalMet(id, g));
  }
  return Object.keys(mine).length > 0 && !!mine.done;
}
