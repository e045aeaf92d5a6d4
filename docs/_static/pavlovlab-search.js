// Search result snippets from the page's own text, without the theme's chrome (launch and download buttons,
// "System Settings Light Dark", the print-only contents, previous/next links, footers). Sphinx's search reads
// the fetched page's [role="main"], which in this theme also holds those buttons; the snippet then starts with
// them. Wrapping Search.htmlToText removes them first. tests/repo/test_book.py checks that what remains of every
// notebook page starts with its title.
const PAVLOVLAB_SEARCH_CHROME = [
  ".bd-header-article", ".onlyprint", ".prev-next-area", ".bd-footer-article", "footer", ".d-print-none",
  ".bd-sidebar-secondary",
];

document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const original = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll(PAVLOVLAB_SEARCH_CHROME.join(", ")).forEach((el) => el.remove());
    return original(page.documentElement.outerHTML, anchor);
  };
});
