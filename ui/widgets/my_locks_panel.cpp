#include "widgets/my_locks_panel.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "actions/lock_controller.hpp"
#include "actions/my_locks_model.hpp"
#include "actions/read_only_switch.hpp"
#include "widgets/take_lock_dialog.hpp"

namespace lockscope {

MyLocksPanel::MyLocksPanel(LockController& controller, ReadOnlySwitch& readOnly, QWidget* parent)
    : QWidget(parent), controller_(controller), readOnly_(readOnly) {
    model_ = new MyLocksModel(controller_, this);
    view_ = new QTableView(this);
    view_->setObjectName(QStringLiteral("myLocksView"));
    view_->setModel(model_);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->verticalHeader()->hide();
    view_->horizontalHeader()->setStretchLastSection(true);
    view_->setWordWrap(false);
    const std::pair<int, int> widths[] = {{MyLocksModel::Name, 170}, {MyLocksModel::Key, 70}, {MyLocksModel::Mode, 135},
                                          {MyLocksModel::Pid, 55},   {MyLocksModel::State, 75}, {MyLocksModel::Time, 90}};
    for (const auto& [column, width] : widths) view_->horizontalHeader()->resizeSection(column, width);

    banner_ = new QLabel(tr("Read-only mode: taking, releasing and ending transactions are off."), this);
    banner_->setObjectName(QStringLiteral("readOnlyBanner"));
    banner_->setStyleSheet(QStringLiteral("color: white; background: #5a5a5a; padding: 3px 6px"));
    banner_->setWordWrap(true);

    take_ = new QPushButton(tr("Take lock…"), this);
    take_->setObjectName(QStringLiteral("takeLockButton"));
    release_ = new QPushButton(tr("Release"), this);
    release_->setObjectName(QStringLiteral("releaseButton"));
    cancel_ = new QPushButton(tr("Cancel wait"), this);
    cancel_->setObjectName(QStringLiteral("cancelWaitButton"));
    commit_ = new QPushButton(tr("Commit"), this);
    rollback_ = new QPushButton(tr("Rollback"), this);
    clear_ = new QPushButton(tr("Clear finished"), this);

    auto* buttons = new QHBoxLayout;
    for (auto* button : {take_, release_, cancel_, commit_, rollback_}) buttons->addWidget(button);
    buttons->addStretch();
    buttons->addWidget(clear_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(banner_);
    layout->addLayout(buttons);
    layout->addWidget(view_);

    connect(take_, &QPushButton::clicked, this, [this] { takeLock(); });
    connect(release_, &QPushButton::clicked, this, [this] { act("release"); });
    connect(cancel_, &QPushButton::clicked, this, [this] { act("cancel"); });
    connect(commit_, &QPushButton::clicked, this, [this] { act("commit"); });
    connect(rollback_, &QPushButton::clicked, this, [this] { act("rollback"); });
    connect(clear_, &QPushButton::clicked, &controller_, &LockController::dismissFinished);
    connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &MyLocksPanel::refreshButtons);
    connect(&controller_, &LockController::lockChanged, this, &MyLocksPanel::refreshButtons);
    connect(&controller_, &LockController::lockAdded, this, [this](quint64 id) {
        view_->selectRow(model_->rowOf(id));  // the lock just taken is the one to act on next
        refreshButtons();
    });
    connect(&controller_, &LockController::lockRemoved, this, &MyLocksPanel::refreshButtons);
    connect(&readOnly_, &ReadOnlySwitch::changed, this, &MyLocksPanel::refreshButtons);

    auto* tick = new QTimer(this);
    tick->setInterval(1000);
    connect(tick, &QTimer::timeout, model_, &MyLocksModel::tick);
    tick->start();
    refreshButtons();
}

quint64 MyLocksPanel::selectedId() const {
    const auto rows = view_->selectionModel()->selectedRows();
    return rows.isEmpty() ? 0 : model_->idAt(rows.first().row());
}

void MyLocksPanel::refreshButtons() {
    const bool readOnly = readOnly_.on();
    banner_->setVisible(readOnly);
    const OwnLock* lock = controller_.find(selectedId());
    const bool held = lock && lock->state == OwnLockState::Held;
    const bool xact = lock && lock->mode == TakeMode::Transaction;
    take_->setEnabled(!readOnly && controller_.hasConnection());
    release_->setEnabled(!readOnly && held && !xact);
    cancel_->setEnabled(lock && lock->state == OwnLockState::Waiting);
    commit_->setEnabled(!readOnly && held && xact);
    rollback_->setEnabled(!readOnly && held && xact);
    clear_->setEnabled(controller_.locks().size() > static_cast<std::size_t>(controller_.activeCount()));
}

void MyLocksPanel::act(const char* what) {
    const quint64 id = selectedId();
    const QByteArray action(what);
    ActionOutcome outcome = ActionOutcome::refuse(tr("Nothing selected."));
    if (action == "release") outcome = controller_.release(id);
    else if (action == "cancel") outcome = controller_.cancelWait(id);
    else if (action == "commit") outcome = controller_.commit(id);
    else if (action == "rollback") outcome = controller_.rollback(id);
    if (!outcome) emit message(outcome.refusal);
    refreshButtons();
}

void MyLocksPanel::takeLock(const QByteArray& name) {
    TakeLockDialog dialog(name, this);
    if (dialog.exec() != QDialog::Accepted) return;
    const auto outcome = controller_.take(dialog.name(), dialog.mode(), dialog.shared());
    if (!outcome) emit message(outcome.refusal);
}

}  // namespace lockscope
