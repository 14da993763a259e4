# label: hazard raises
# why: unwrap_to_tensors returns predictions.detach().cpu(), which on CPU shares storage (and version counter) with the model output, so `predictions *= mask` rewrites the tensor the MSE loss saved for backward
# source: https://github.com/allenai/allennlp/pull/1691 (commit cf4806536e9253d848c0c801cee533238a45ee98)
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Metric:
    @staticmethod
    def unwrap_to_tensors(*tensors: torch.Tensor):
        """
        If you actually passed gradient-tracking Tensors to a Metric, there will be
        a huge memory leak, because it will prevent garbage collection for the computation
        graph. This method ensures that you're using tensors directly and that they are on
        the CPU.
        """
        return (x.detach().cpu() if isinstance(x, torch.Tensor) else x for x in tensors)


class Covariance(Metric):
    def __init__(self) -> None:
        self._total_prediction_mean = 0.0
        self._total_label_mean = 0.0
        self._total_co_moment = 0.0
        self._total_count = 0.0

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: Optional[torch.Tensor] = None):
        predictions, gold_labels, mask = self.unwrap_to_tensors(predictions, gold_labels, mask)
        predictions = predictions.view(-1)
        gold_labels = gold_labels.view(-1)

        if mask is not None:
            mask = mask.view(-1)
            predictions *= mask  # <-- IPL007, IPL004: predictions is the caller's model output seen through detach(), saved by the MSE loss
            gold_labels *= mask  # <-- IPL004: gold_labels is the caller's label tensor seen through detach()
            num_batch_items = torch.sum(mask).item()
        else:
            num_batch_items = gold_labels.numel()

        previous_count = self._total_count
        updated_count = self._total_count + num_batch_items

        batch_mean_prediction = torch.sum(predictions) / num_batch_items
        delta_mean_prediction = ((batch_mean_prediction - self._total_prediction_mean) * num_batch_items) / updated_count
        previous_total_prediction_mean = self._total_prediction_mean
        self._total_prediction_mean += delta_mean_prediction.item()

        batch_mean_label = torch.sum(gold_labels) / num_batch_items
        delta_mean_label = ((batch_mean_label - self._total_label_mean) * num_batch_items) / updated_count
        previous_total_label_mean = self._total_label_mean
        self._total_label_mean += delta_mean_label.item()

        batch_coresiduals = (predictions - batch_mean_prediction) * (gold_labels - batch_mean_label)
        if mask is not None:
            batch_co_moment = torch.sum(batch_coresiduals * mask)
        else:
            batch_co_moment = torch.sum(batch_coresiduals)
        delta_co_moment = (batch_co_moment + (previous_total_prediction_mean - batch_mean_prediction) *
                           (previous_total_label_mean - batch_mean_label) *
                           (previous_count * num_batch_items / updated_count))
        self._total_co_moment += delta_co_moment.item()
        self._total_count = updated_count

    def get_metric(self, reset: bool = False):
        return self._total_co_moment / (self._total_count - 1)


class SequenceRegressor(nn.Module):
    """A token-level regression model that reports the covariance of its predictions, AllenNLP style."""

    def __init__(self, vocab_size=16, dim=8):
        super().__init__()
        self.embedder = nn.Embedding(vocab_size, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, 1)
        self.covariance = Covariance()

    def forward(self, tokens, targets):
        mask = (tokens != 0).float()
        encoded, _ = self.encoder(self.embedder(tokens))
        predictions = torch.tanh(self.head(encoded).squeeze(-1))
        loss = (F.mse_loss(predictions, targets, reduction="none") * mask).sum() / mask.sum()
        self.covariance(predictions, targets, mask)
        return {"loss": loss, "predictions": predictions}


model = SequenceRegressor()
tokens = torch.tensor([[1, 4, 6, 2], [3, 5, 0, 0]])
targets = torch.rand(2, 4)
output = model(tokens, targets)
output["loss"].backward()
