/**
 * SQL highlighting for `%%dc sql` cells: a cell whose first line is `%%dc sql ...` is
 * highlighted as SQL, and switches back to Python as soon as that line changes.
 */
import type { LanguageSupport } from '@codemirror/language';
import {
  Compartment,
  EditorState,
  Prec,
  type Extension,
  type Text
} from '@codemirror/state';
import type { CodeEditor } from '@jupyterlab/codeeditor';

/** The first line of a cell that `%dc` runs as SQL (workbench/magics/parser.py: `sql`). */
const SQL_CELL = /^%%dc[ \t]+sql(?:\s|$)/;

/** Whether an editor of `mimeType` holding `doc` shows a `%%dc sql` cell. */
function isSqlCell(mimeType: string, doc: Text): boolean {
  return mimeType.includes('python') && SQL_CELL.test(doc.line(1).text);
}

/**
 * The editor extension: a compartment holding SQL at the highest precedence (the `language`
 * facet takes its first value, so it wins over the cell's Python) or nothing, set from the
 * first line when the editor opens and reconfigured by a transaction extender, the pattern
 * CodeMirror's documentation gives for a language chosen by the content.
 */
export function sqlCells(
  model: CodeEditor.IModel,
  sql: LanguageSupport
): Extension {
  const compartment = new Compartment();
  const on = Prec.highest(sql);
  const initial = EditorState.create({ doc: model.sharedModel.getSource() }).doc;
  return [
    compartment.of(isSqlCell(model.mimeType, initial) ? on : []),
    EditorState.transactionExtender.of(transaction => {
      if (!transaction.docChanged) {
        return null;
      }
      const wanted = isSqlCell(model.mimeType, transaction.newDoc);
      if (wanted === (compartment.get(transaction.startState) === on)) {
        return null;
      }
      return { effects: compartment.reconfigure(wanted ? on : []) };
    })
  ];
}
