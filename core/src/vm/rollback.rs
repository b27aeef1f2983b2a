//! Undoing an evaluation: globals and older heap objects are saved the
//! first time an evaluation changes them, so that a limit that ends it can
//! put everything back (see "A limit undoes its evaluation" in
//! docs/ARCHITECTURE.md). An ordinary error keeps what ran before it.

use super::Vm;

impl Vm {
    /// Saves a global's value before the current evaluation first changes it.
    #[inline]
    pub(super) fn save_global(&mut self, g: u32) {
        let i = g as usize;
        if i >= self.global_stamps.len() {
            self.global_stamps
                .resize(self.globals.values.len().max(i + 1), 0);
        }
        if self.global_stamps[i] != self.eval_stamp {
            self.global_stamps[i] = self.eval_stamp;
            self.saved_globals.push((g, self.globals.values[i]));
        }
    }

    /// Starts an evaluation that can be undone as a whole.
    pub(super) fn begin_evaluation(&mut self) {
        self.eval_stamp = self.eval_stamp.wrapping_add(1);
        self.saved_globals.clear();
        self.heap.begin_evaluation();
    }

    pub(super) fn commit_evaluation(&mut self) {
        self.saved_globals.clear();
        self.heap.commit_evaluation();
    }

    /// Puts back every global and every older object the evaluation changed.
    pub(super) fn rollback_evaluation(&mut self) {
        for (g, v) in self.saved_globals.drain(..).rev() {
            self.globals.values[g as usize] = v;
        }
        self.heap.rollback_evaluation();
        self.refresh_inline();
    }
}
