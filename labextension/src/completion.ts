/**
 * Catalog completion in the kernel's order. The workbench kernel matcher
 * (workbench/magics/completion.py) ranks its candidates case-insensitively, prefix first, and
 * tells their kind in each item's type (`table`, `column · int64 · shop.orders`, ...).
 * JupyterLab's CompleterModel would filter them again case-sensitively as the user types and
 * sort them by its own score, and the editor-words provider would add its words below them.
 *
 * The route taken, as the least fragile one: a provider that fetches nothing and is never
 * applicable, ranked above the kernel's (550), so the completion manager takes the completer
 * model from it (`modelFactory` of the first active provider). The kernel provider still
 * fetches, so there is one complete_request per Tab. The model behaves as JupyterLab's own
 * unless the kernel answered with catalog items: then it keeps only those, in their order,
 * and filters them case-insensitively by subsequence while the user types. Replacing the
 * kernel provider would mean a second request or changing the user's provider settings.
 */
import type {
  CompletionHandler,
  ICompletionProvider
} from '@jupyterlab/completer';
import { CompleterModel } from '@jupyterlab/completer';

/** Item types the kernel matcher gives (workbench/frontend/completion.py's kinds). */
const CATALOG_KINDS = [
  'table',
  'column',
  'namespace',
  'catalog',
  'branch',
  'tag',
  '%dc'
];
/** The type of the item the matcher sends when it has nothing to offer (it hides the rest). */
const NO_MATCH = 'no match';

type Item = CompletionHandler.ICompletionItem;

function isCatalogItem(item: Item): boolean {
  const kind = (item.type ?? '').split(' ')[0];
  return CATALOG_KINDS.includes(kind) || item.type === NO_MATCH;
}

/** Whether the characters of `query` appear in `text` in order. */
function isSubsequence(query: string, text: string): boolean {
  let found = 0;
  for (const char of text) {
    if (char === query[found]) {
      found += 1;
      if (found === query.length) {
        return true;
      }
    }
  }
  return found === query.length;
}

function escapeHTML(text: string): string {
  const node = document.createElement('span');
  node.textContent = text;
  return node.innerHTML;
}

/** JupyterLab's model, except for catalog items (see the top of this file). */
export class CatalogCompleterModel extends CompleterModel {
  get original(): CompleterModel['original'] {
    return super.original;
  }
  set original(value: CompleterModel['original']) {
    this._catalog = null;
    super.original = value;
  }

  setCompletionItems(items: CompletionHandler.ICompletionItems): void {
    const catalog = items.filter(isCatalogItem);
    this._catalog = catalog.length
      ? catalog.filter(item => item.type !== NO_MATCH)
      : null;
    super.setCompletionItems(this._catalog ?? items);
  }

  completionItems(): CompletionHandler.ICompletionItems {
    const query = this.query.toLowerCase();
    if (!this._catalog || !query) {
      return super.completionItems();
    }
    return this._catalog
      .filter(item =>
        isSubsequence(query, (item.insertText ?? item.label).toLowerCase())
      )
      .map(item => ({
        ...item,
        label: escapeHTML(item.label),
        insertText: item.insertText ?? item.label
      }));
  }

  reset(hard?: boolean): void {
    this._catalog = null;
    super.reset(hard);
  }

  private _catalog: Item[] | null = null;
}

/** The provider that brings the model (see the top of this file). */
export class CatalogCompletionProvider implements ICompletionProvider {
  readonly identifier = 'workbench:catalog';
  readonly rank = 600;
  readonly renderer = null;

  async isApplicable(): Promise<boolean> {
    return false;
  }

  async fetch(): Promise<CompletionHandler.ICompletionItemsReply> {
    return { start: 0, end: 0, items: [] };
  }

  async modelFactory(): Promise<CatalogCompleterModel> {
    return new CatalogCompleterModel();
  }
}

/** JupyterLab's debugger completion provider (in @jupyterlab/debugger-extension). */
const DEBUGGER_PROVIDER = 'DebuggerCompletionProvider';

interface IDebuggerProvider extends ICompletionProvider {
  _debuggerService?: { hasStoppedThreads?: () => boolean };
}

/**
 * Keep JupyterLab's debugger completion provider out of `%dc`/`%%dc` cells while no thread
 * is stopped in the debugger. It is ranked first and, applicable to every Python kernel,
 * evaluates through the debugger on each Tab (two round trips, about 60 ms) though it can
 * only answer in a stopped frame; the popup waits for every provider, so it held back the
 * catalog's names. While the debugger is stopped, or in other cells, it is left as it is.
 */
export function keepDebuggerCompletionToDebugging(
  providers: Map<string, ICompletionProvider>
): void {
  const provider = providers.get(DEBUGGER_PROVIDER) as IDebuggerProvider | undefined;
  if (!provider) {
    return;
  }
  const applicable = provider.isApplicable.bind(provider);
  provider.isApplicable = async context => {
    const source = context.editor?.model.sharedModel.getSource() ?? '';
    const stopped = provider._debuggerService?.hasStoppedThreads?.() ?? true;
    if (/^\s*%%?dc\b/.test(source) && !stopped) {
      return false;
    }
    return applicable(context);
  };
}
