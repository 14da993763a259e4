# label: safe
# why: the commit's StochasticSwapNoise.augment copies first (`output_tensor = input_tensor.clone()`) and swaps the items in the copy, so the batch dict the caller keeps is untouched and the next-item targets are built from the clean sessions.
# source: https://github.com/NVIDIA-Merlin/Transformers4Rec/commit/9f99b491ac4dbdc43aa6b750a94e4f38420a26e8
from typing import Dict, Union

import torch

torch.manual_seed(0)

TensorOrTabularData = Union[torch.Tensor, Dict[str, torch.Tensor]]


class DataAugmentation(torch.nn.Module):
    def augment(self, inputs: torch.Tensor, **kwargs) -> torch.Tensor:
        raise NotImplementedError()

    def forward(self, inputs: TensorOrTabularData, **kwargs) -> TensorOrTabularData:
        if isinstance(inputs, dict):
            return {key: self.augment(val) for key, val in inputs.items()}

        return self.augment(inputs)


class StochasticSwapNoise(DataAugmentation):
    """
    Applies Stochastic replacement of sequence features
    """

    def __init__(self, pad_token=0, replacement_prob=0.1):
        super().__init__()
        self.pad_token = pad_token
        self.replacement_prob = replacement_prob

    def augment(self, input_tensor: torch.Tensor, **kwargs) -> torch.Tensor:
        with torch.no_grad():
            cdata_non_zero_mask = input_tensor != self.pad_token
            sse_prob_replacement_matrix = torch.full(
                input_tensor.shape,
                self.replacement_prob,
                device=input_tensor.device,
            )
            sse_replacement_mask = (
                torch.bernoulli(sse_prob_replacement_matrix).bool() & cdata_non_zero_mask
            )
            n_values_to_replace = sse_replacement_mask.sum()

            cdata_flattened_non_zero = torch.masked_select(input_tensor, cdata_non_zero_mask)

            sampled_values_to_replace = cdata_flattened_non_zero[
                torch.randperm(cdata_flattened_non_zero.shape[0])
            ][:n_values_to_replace]

            output_tensor = input_tensor.clone()
            output_tensor[sse_replacement_mask] = sampled_values_to_replace

        return output_tensor


class TabularSequenceFeatures(torch.nn.Module):
    def __init__(self, cardinalities, d_model, augmentation=None):
        super().__init__()
        self.augmentation = augmentation
        self.embedding_tables = torch.nn.ModuleDict({name: torch.nn.Embedding(card, d_model, padding_idx=0) for name, card in cardinalities.items()})

    def forward(self, inputs):
        if self.augmentation is not None and self.training:
            inputs = self.augmentation(inputs)
        return sum(self.embedding_tables[name](inputs[name]) for name in self.embedding_tables)


class NextItemPredictionTask(torch.nn.Module):
    def __init__(self, d_model, n_items, target_name="item_id/list"):
        super().__init__()
        self.target_name = target_name
        self.rnn = torch.nn.GRU(d_model, d_model, batch_first=True)
        self.output_layer = torch.nn.Linear(d_model, n_items)

    def forward(self, body_output, inputs):
        hidden, _ = self.rnn(body_output)
        # causal LM targets: the next item of the (clean) input session
        labels = inputs[self.target_name][:, 1:]
        logits = self.output_layer(hidden[:, :-1])
        mask = labels != 0
        return torch.nn.functional.cross_entropy(logits[mask], labels[mask]), labels


class Model(torch.nn.Module):
    def __init__(self, body, head):
        super().__init__()
        self.body = body
        self.head = head

    def forward(self, inputs):
        return self.head(self.body(inputs), inputs)


def main():
    cardinalities = {"item_id/list": 50, "category/list": 10}
    body = TabularSequenceFeatures(cardinalities, d_model=16, augmentation=StochasticSwapNoise(pad_token=0, replacement_prob=0.3))
    model = Model(body, NextItemPredictionTask(16, 50))
    model.train()
    batch = {
        "item_id/list": torch.randint(1, 50, (4, 8)),
        "category/list": torch.randint(1, 10, (4, 8)),
    }
    batch["item_id/list"][1, 5:] = 0
    batch["category/list"][1, 5:] = 0
    loss, labels = model(batch)
    loss.backward()
    return loss.detach(), labels.clone(), model.head.output_layer.weight.grad.clone()


loss, labels, output_layer_grad = main()
