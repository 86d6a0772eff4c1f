/**
 * workbench's JupyterLab extension: `%%dc sql` cells highlighted as SQL, and catalog
 * completion kept in the order and matching the kernel gives (see sql.ts and completion.ts).
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';
import {
  ICompletionProvider,
  ICompletionProviderManager
} from '@jupyterlab/completer';

import {
  CatalogCompletionProvider,
  keepDebuggerCompletionToDebugging
} from './completion';
import { sqlCells } from './sql';

/** The SQL of `%%dc sql` cells: DuckDB's is closest to PostgreSQL's. */
const SQL_MIME = 'text/x-pgsql';

const sqlPlugin: JupyterFrontEndPlugin<void> = {
  id: 'workbench-jupyterlab:sql-cells',
  description: 'Highlights %%dc sql cells as SQL.',
  autoStart: true,
  requires: [IEditorExtensionRegistry, IEditorLanguageRegistry],
  activate: async (
    app: JupyterFrontEnd,
    extensions: IEditorExtensionRegistry,
    languages: IEditorLanguageRegistry
  ): Promise<void> => {
    const spec = languages.findByMIME(SQL_MIME);
    const sql = spec ? (await languages.getLanguage(spec))?.support : undefined;
    if (!sql) {
      console.warn(`workbench: no ${SQL_MIME} language; %%dc sql cells stay Python`);
      return;
    }
    extensions.addExtension({
      name: 'workbench-jupyterlab:sql-cells',
      factory: ({ model }) =>
        EditorExtensionRegistry.createImmutableExtension(sqlCells(model, sql))
    });
  }
};

const completionPlugin: JupyterFrontEndPlugin<void> = {
  id: 'workbench-jupyterlab:catalog-completion',
  description: 'Keeps catalog completions in the kernel order, matched case-insensitively.',
  autoStart: true,
  requires: [ICompletionProviderManager],
  activate: (app: JupyterFrontEnd, manager: ICompletionProviderManager): void => {
    manager.registerProvider(new CatalogCompletionProvider());
    // the debugger's provider is registered by its own plugin, started by the time the app
    // is restored
    const listed = manager as unknown as {
      getProviders?: () => Map<string, ICompletionProvider>;
    };
    void app.restored.then(() => {
      if (listed.getProviders) {
        keepDebuggerCompletionToDebugging(listed.getProviders());
      }
    });
  }
};

export default [sqlPlugin, completionPlugin];
