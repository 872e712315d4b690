// How the locks view and the side panel are laid out on the first screen: the lock list gets the
// room, the columns an operator looks for first are in front, and the side panel keeps the width
// the operator gave it.
#pragma once

class QSplitter;
class QTabWidget;
class QWidget;
class QTreeView;
class QString;

namespace lockscope {

// The locks view's columns: Waiters right after Name, Application elided at its end, widths
// that fit the first rows to arrive (between a minimum and a maximum per column), and a first
// click on Waiters or Held for sorting the biggest first.
void setUpLocksColumns(QTreeView& view);

// The lock list on the left, the side panel on the right: narrow by default (or collapsed), its
// width saved in QSettings under `settingsKey` whenever the operator moves the handle, and
// restored from there.
void setUpSidePanelSplitter(QSplitter& split, const QString& settingsKey);

// A side panel as a tab of `tabs`, in a scroll area: a panel whose buttons need more than the
// side panel's width scrolls instead of forcing the side panel wider than the lock list.
void addSidePanel(QTabWidget& tabs, QWidget* panel, const QString& label);
// Makes the tab of `panel` (added with addSidePanel) the current one.
void showSidePanel(QTabWidget& tabs, QWidget* panel);

}  // namespace lockscope
