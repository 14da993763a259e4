# label: hazard silent
# why: with only real-valued inputs DeepAR.construct_input_vector sets `input_vector = x_cont` and then shifts the target column in place (`input_vector[..., self.target_positions] = torch.roll(...)`, then `input_vector[:, 0, ...] = one_off_target`), i.e. it rewrites the caller's `x["encoder_cont"]`/`x["decoder_cont"]`; forward then reads the already-shifted encoder target as `one_off_target`, and the cached batch drifts every epoch (fixed by `x_cont.clone()`).
# source: https://github.com/sktime/pytorch-forecasting/commit/82f738cbf656790f88ee0216bbded56f53af721a
from typing import Dict, List, Tuple

import torch
from torch import nn

torch.manual_seed(0)

HiddenState = Tuple[torch.Tensor, torch.Tensor]


class MultiEmbedding(nn.Module):
    def __init__(self, embedding_sizes: Dict[str, Tuple[int, int]], x_categoricals: List[str]):
        super().__init__()
        self.x_categoricals = x_categoricals
        self.embeddings = nn.ModuleDict({name: nn.Embedding(*size) for name, size in embedding_sizes.items()})

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        return {name: self.embeddings[name](x[..., i]) for i, name in enumerate(self.x_categoricals)}


class DeepAR(nn.Module):
    def __init__(
        self,
        x_reals: List[str],
        x_categoricals: List[str],
        target: str,
        embedding_sizes: Dict[str, Tuple[int, int]] = None,
        hidden_size: int = 10,
        rnn_layers: int = 2,
    ):
        super().__init__()
        self.reals = x_reals
        self.categoricals = x_categoricals
        self.target = target
        self.embeddings = MultiEmbedding(embedding_sizes or {}, x_categoricals)
        input_size = len(x_reals) + sum(size[1] for size in (embedding_sizes or {}).values())
        self.rnn = nn.LSTM(input_size=input_size, hidden_size=hidden_size, num_layers=rnn_layers, batch_first=True)
        # projects onto the parameters of a normal distribution (loc, log scale)
        self.distribution_projector = nn.Linear(hidden_size, 2)

    @property
    def target_positions(self) -> torch.LongTensor:
        return torch.tensor([self.reals.index(self.target)], dtype=torch.long)

    def construct_input_vector(
        self, x_cat: torch.Tensor, x_cont: torch.Tensor, one_off_target: torch.Tensor = None
    ) -> torch.Tensor:
        """
        Create input vector into RNN network

        Args:
            one_off_target: tensor to insert into first position of target. If None (default), remove first time step.
        """
        # create input vector
        if len(self.categoricals) > 0:
            embeddings = self.embeddings(x_cat)
            flat_embeddings = torch.cat([emb for emb in embeddings.values()], dim=-1)
            input_vector = flat_embeddings

        if len(self.reals) > 0:
            input_vector = x_cont

        if len(self.reals) > 0 and len(self.categoricals) > 0:
            input_vector = torch.cat([x_cont, flat_embeddings], dim=-1)

        # shift target by one
        input_vector[..., self.target_positions] = torch.roll(  # <-- IPL004
            input_vector[..., self.target_positions], shifts=1, dims=1
        )

        if one_off_target is not None:  # set first target input (which is rolled over)
            input_vector[:, 0, self.target_positions] = one_off_target  # <-- IPL004
        else:
            input_vector = input_vector[:, 1:]

        # shift target
        return input_vector

    def encode(self, x: Dict[str, torch.Tensor]) -> HiddenState:
        """
        Encode sequence into hidden state
        """
        assert x["encoder_lengths"].min() > 0
        input_vector = self.construct_input_vector(x["encoder_cat"], x["encoder_cont"])
        _, hidden_state = self.rnn(input_vector)  # second ouput is not needed (hidden state)
        return hidden_state

    def decode_all(self, x: torch.Tensor, hidden_state: HiddenState):
        decoder_output, hidden_state = self.rnn(x, hidden_state)
        output = self.distribution_projector(decoder_output)
        return output, hidden_state

    def decode(self, input_vector: torch.Tensor, target_scale: torch.Tensor, hidden_state: HiddenState) -> torch.Tensor:
        output, _ = self.decode_all(input_vector, hidden_state)
        loc = output[..., 0] * target_scale[:, 1, None] + target_scale[:, 0, None]
        scale = nn.functional.softplus(output[..., 1]) * target_scale[:, 1, None]
        return torch.stack([loc, scale], dim=-1)

    def forward(self, x: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        """
        Forward network
        """
        hidden_state = self.encode(x)
        # decode
        input_vector = self.construct_input_vector(
            x["decoder_cat"],
            x["decoder_cont"],
            one_off_target=x["encoder_cont"][
                torch.arange(x["encoder_cont"].size(0), device=x["encoder_cont"].device),
                x["encoder_lengths"] - 1,
                self.target_positions.unsqueeze(-1),
            ].T,
        )
        output = self.decode(input_vector, target_scale=x["target_scale"], hidden_state=hidden_state)
        return dict(prediction=output)


def make_batch(batch_size=4, encoder_length=6, decoder_length=3):
    t = torch.arange(encoder_length + decoder_length, dtype=torch.float32)
    phase = torch.rand(batch_size, 1) * 6.28
    series = torch.sin(0.7 * t + phase)
    covariate = torch.cos(0.3 * t + phase)
    cont = torch.stack([series, covariate], dim=-1)
    return {
        "encoder_cont": cont[:, :encoder_length].clone(),
        "decoder_cont": cont[:, encoder_length:].clone(),
        "encoder_cat": torch.zeros(batch_size, encoder_length, 0, dtype=torch.long),
        "decoder_cat": torch.zeros(batch_size, decoder_length, 0, dtype=torch.long),
        "encoder_lengths": torch.full((batch_size,), encoder_length, dtype=torch.long),
        "decoder_lengths": torch.full((batch_size,), decoder_length, dtype=torch.long),
        "target_scale": torch.tensor([[0.0, 1.0]]).repeat(batch_size, 1),
    }, series[:, encoder_length:].clone()


def main():
    model = DeepAR(x_reals=["value", "covariate"], x_categoricals=[], target="value")
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = make_batch()
    losses = []
    for epoch in range(3):  # the same cached batch is seen every epoch
        out = model(x)["prediction"]
        loss = -torch.distributions.Normal(out[..., 0], out[..., 1]).log_prob(y).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses), x["encoder_cont"], x["decoder_cont"]


losses, encoder_cont, decoder_cont = main()
