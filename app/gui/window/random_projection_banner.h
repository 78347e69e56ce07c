#pragma once
// The strip above the heads that says what random projections mean: nothing has been learned, so
// the picture shows a variant's structure, not language — with one click to a trained model
// instead (the bundled Transformer-XL sample) and a button to dismiss it.

#include <QFrame>

class QLabel;
class QPushButton;

namespace attnscope::app {

class RandomProjectionBanner : public QFrame {
    Q_OBJECT
public:
    explicit RandomProjectionBanner(QWidget* parent = nullptr);
    QPushButton* useModelButton() const { return m_useModel; }
    QPushButton* dismissButton() const { return m_dismiss; }
    QString text() const;
    bool dismissed() const { return m_dismissed; }
    /// Shown while Q, K, V are random projections, unless the user dismissed it.
    void setRandomProjections(bool random);

Q_SIGNALS:
    void useSampleModelRequested();

private:
    QLabel* m_label = nullptr;
    QPushButton* m_useModel = nullptr;
    QPushButton* m_dismiss = nullptr;
    bool m_dismissed = false;
};

}  // namespace attnscope::app
