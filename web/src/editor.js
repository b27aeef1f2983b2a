// The input editor: CodeMirror 6 with Scheme highlighting (the legacy
// Scheme mode), bracket matching and closing, Lisp-style indentation (the
// mode's rules: a body two columns in, arguments under the first one), Tab
// to indent, Ctrl/Cmd+Enter to run, and Up/Down on the first/last line to
// walk the input history.

import { EditorState } from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection, placeholder,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import {
  StreamLanguage, bracketMatching, indentOnInput, syntaxHighlighting, defaultHighlightStyle,
} from '@codemirror/language';
import { closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
import { scheme } from '@codemirror/legacy-modes/mode/scheme';

export const schemeLanguage = StreamLanguage.define(scheme);

/**
 * Creates the editor in `parent`.
 *   onRun()               Ctrl/Cmd+Enter
 *   onHistory(delta)      Up on the first line (-1) / Down on the last (+1);
 *                         returns the text to show, or null to move the cursor
 *                         as usual
 */
export function createEditor({ parent, onRun, onHistory, label }) {
  const atFirstLine = (view) => view.state.doc.lineAt(view.state.selection.main.head).number === 1;
  const atLastLine = (view) => view.state.doc.lineAt(view.state.selection.main.head).number === view.state.doc.lines;
  const walk = (delta, edge) => (view) => {
    if (!view.state.selection.main.empty || !edge(view)) return false;
    const text = onHistory(delta);
    if (text == null) return false;
    setText(view, text);
    return true;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: '',
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        schemeLanguage,
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        bracketMatching(),
        closeBrackets(),
        indentOnInput(),
        placeholder('(+ 1 2)'),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ 'aria-label': label, spellcheck: 'false', autocapitalize: 'off', autocorrect: 'off' }),
        keymap.of([
          { key: 'Mod-Enter', run: () => { onRun(); return true; } },
          { key: 'ArrowUp', run: walk(-1, atFirstLine) },
          { key: 'ArrowDown', run: walk(1, atLastLine) },
          ...closeBracketsKeymap,
          ...historyKeymap,
          indentWithTab,
          ...defaultKeymap,
        ]),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText: (text) => setText(view, text),
    focus: () => view.focus(),
  };
}

function setText(view, text) {
  view.dispatch({
    changes: { from: 0, to: view.state.doc.length, insert: text },
    selection: { anchor: text.length },
    scrollIntoView: true,
  });
}

/** Highlighted, read-only code (the node view and diffs). */
export function showCode(parent, text) {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [
        EditorState.readOnly.of(true),
        EditorView.editable.of(false),
        EditorView.lineWrapping,
        schemeLanguage,
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
      ],
    }),
  });
}
