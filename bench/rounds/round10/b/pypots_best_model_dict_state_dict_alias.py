# label: hazard silent no-twin
# why: best_model_dict keeps model.state_dict(), whose tensors alias the live parameters, so every later optimizer.step() rewrites the "best" checkpoint and the restored model is just the last one.
# source: https://github.com/WenjieDu/PyPOTS/issues/667 (fixed in https://github.com/WenjieDu/PyPOTS/pull/668)
import torch
import torch.nn as nn

torch.manual_seed(0)


class _SAITSLike(nn.Module):
    def __init__(self, n_steps, n_features, d_model=8):
        super().__init__()
        self.embedding = nn.Linear(n_features * 2, d_model)
        self.rnn = nn.GRU(d_model, d_model, batch_first=True)
        self.reduce = nn.Linear(d_model, n_features)

    def forward(self, inputs, training=True):
        X, missing_mask = inputs["X"], inputs["missing_mask"]
        h, _ = self.rnn(self.embedding(torch.cat([X, missing_mask], dim=-1)))
        reconstruction = self.reduce(h)
        imputed_data = missing_mask * X + (1 - missing_mask) * reconstruction
        results = {"imputed_data": imputed_data}
        if training:
            results["loss"] = ((reconstruction - X) ** 2 * missing_mask).sum() / (missing_mask.sum() + 1e-9)
        return results


class BaseNNImputer:
    def __init__(self, model, epochs=5, patience=10):
        self.model = model
        self.epochs = epochs
        self.patience = patience
        self.original_patience = patience
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=0.2)
        self.best_loss = float("inf")
        self.best_model_dict = None
        self.best_epoch = -1

    def _train_model(self, train_set, val_set):
        for epoch in range(1, self.epochs + 1):
            self.model.train()
            for inputs in train_set:
                self.optimizer.zero_grad()
                results = self.model(inputs)
                results["loss"].backward()
                self.optimizer.step()  # <-- IPL002: also overwrites the tensors held in best_model_dict
            self.model.eval()
            with torch.no_grad():
                mean_loss = sum(self.model(inputs)["loss"].item() for inputs in val_set) / len(val_set)
            if mean_loss < self.best_loss:
                self.best_epoch = epoch
                self.best_loss = mean_loss
                self.best_model_dict = self.model.state_dict()
                self.patience = self.original_patience
            else:
                self.patience -= 1
            if self.patience == 0:
                break

    def fit(self, train_set, val_set):
        self._train_model(train_set, val_set)
        self.model.load_state_dict(self.best_model_dict)
        self.model.eval()


def make_batch():
    X = torch.randn(4, 5, 3)
    missing_mask = (torch.rand(4, 5, 3) > 0.2).float()
    return {"X": X * missing_mask, "missing_mask": missing_mask}


imputer = BaseNNImputer(_SAITSLike(5, 3))
train_set = [make_batch() for _ in range(3)]
val_set = [make_batch()]
imputer.fit(train_set, val_set)
with torch.no_grad():
    restored_val_loss = imputer.model(val_set[0])["loss"]
best_epoch_loss = torch.tensor(imputer.best_loss)
