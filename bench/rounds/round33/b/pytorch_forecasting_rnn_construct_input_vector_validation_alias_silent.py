# label: hazard silent
# why: the same commit fixed RecurrentNetwork.construct_input_vector: with real-valued inputs only, `input_vector = x_cont` aliases the batch, and the in-place target shift (`input_vector[..., target_positions] = torch.roll(...)`, `input_vector[:, 0, target_positions] = one_off_target`) rewrites `x["encoder_cont"]`/`x["decoder_cont"]`; the autoregressive validation decode then starts from a shifted encoder target, and every later validation pass over the cached batch shifts it again.
# source: https://github.com/sktime/pytorch-forecasting/commit/82f738cbf656790f88ee0216bbded56f53af721a
from typing import Callable, Dict, List, Tuple, Union

import torch
from torch import nn

torch.manual_seed(0)

HiddenState = Tuple[torch.Tensor, torch.Tensor]


def apply_to_list(obj: Union[List, torch.Tensor], func: Callable) -> Union[List, torch.Tensor]:
    if isinstance(obj, (list, tuple)):
        return [func(o) for o in obj]
    else:
        return func(obj)


class RecurrentNetwork(nn.Module):
    def __init__(self, x_reals: List[str], x_categoricals: List[str], target: str, hidden_size: int = 8, rnn_layers: int = 1):
        super().__init__()
        self.reals = x_reals
        self.categoricals = x_categoricals
        self.target = target
        self.rnn = nn.LSTM(input_size=len(x_reals), hidden_size=hidden_size, num_layers=rnn_layers, batch_first=True)
        self.output_projector = nn.Linear(hidden_size, 1)

    @property
    def target_positions(self) -> torch.LongTensor:
        return torch.tensor([self.reals.index(self.target)], dtype=torch.long)

    @property
    def lagged_target_positions(self) -> Dict[int, torch.LongTensor]:
        return {}

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

    def decode_all(self, x: torch.Tensor, hidden_state: HiddenState, lengths: torch.Tensor = None):
        decoder_output, hidden_state = self.rnn(x, hidden_state)
        output = self.output_projector(decoder_output)[..., 0]
        return output, hidden_state

    def transform_output(self, prediction: torch.Tensor, target_scale: torch.Tensor) -> torch.Tensor:
        return prediction * target_scale[:, 1, None] + target_scale[:, 0, None]

    def decode_autoregressive(self, decode_one: Callable, first_target: torch.Tensor, first_hidden_state: HiddenState,
                              target_scale: torch.Tensor, n_decoder_steps: int) -> torch.Tensor:
        output = []
        current_target = first_target
        current_hidden_state = first_hidden_state
        normalized_output = [first_target]
        for idx in range(n_decoder_steps):
            current_target, current_hidden_state = decode_one(idx, lagged_targets=normalized_output, hidden_state=current_hidden_state)
            normalized_output.append(current_target)
            output.append(self.transform_output(current_target, target_scale=target_scale))
        return torch.stack(output, dim=1)

    def decode(self, input_vector: torch.Tensor, target_scale: torch.Tensor, decoder_lengths: torch.Tensor,
               hidden_state: HiddenState) -> torch.Tensor:
        if self.training:
            output, _ = self.decode_all(input_vector, hidden_state, lengths=decoder_lengths)
            output = self.transform_output(output, target_scale=target_scale)
        else:
            # run in eval, i.e. simulation mode
            target_pos = self.target_positions
            lagged_target_positions = self.lagged_target_positions

            # define function to run at every decoding step
            def decode_one(idx, lagged_targets, hidden_state):
                x = input_vector[:, [idx]]
                x[:, 0, target_pos] = lagged_targets[-1].unsqueeze(-1)
                for lag, lag_positions in lagged_target_positions.items():
                    if idx > lag:
                        x[:, 0, lag_positions] = lagged_targets[-lag]
                prediction, hidden_state = self.decode_all(x, hidden_state)
                prediction = apply_to_list(prediction, lambda x: x[:, 0])  # select first time step
                return prediction, hidden_state

            # make predictions which are fed into next step
            output = self.decode_autoregressive(
                decode_one,
                first_target=input_vector[:, 0, target_pos[0]],
                first_hidden_state=hidden_state,
                target_scale=target_scale,
                n_decoder_steps=input_vector.size(1),
            )
        return output

    def forward(self, x: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
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
        output = self.decode(
            input_vector,
            decoder_lengths=x["decoder_lengths"],
            target_scale=x["target_scale"],
            hidden_state=hidden_state,
        )
        return dict(prediction=output)


def make_batch(batch_size=3, encoder_length=8, decoder_length=4):
    t = torch.arange(encoder_length + decoder_length, dtype=torch.float32)
    phase = torch.rand(batch_size, 1) * 6.28
    series = torch.sin(0.5 * t + phase)
    trend = 0.1 * t.expand(batch_size, -1)
    cont = torch.stack([series, trend], dim=-1)
    return {
        "encoder_cont": cont[:, :encoder_length].clone(),
        "decoder_cont": cont[:, encoder_length:].clone(),
        "encoder_cat": torch.zeros(batch_size, encoder_length, 0, dtype=torch.long),
        "decoder_cat": torch.zeros(batch_size, decoder_length, 0, dtype=torch.long),
        "encoder_lengths": torch.full((batch_size,), encoder_length, dtype=torch.long),
        "decoder_lengths": torch.full((batch_size,), decoder_length, dtype=torch.long),
        "target_scale": torch.tensor([[0.0, 1.0]]).repeat(batch_size, 1),
    }


def main():
    model = RecurrentNetwork(x_reals=["value", "time_idx_scaled"], x_categoricals=[], target="value")
    model.eval()
    val_batch = make_batch()
    predictions = []
    with torch.no_grad():
        for epoch in range(2):  # validation loop over the same cached batch at the end of each epoch
            predictions.append(model(val_batch)["prediction"])
    return torch.stack(predictions), val_batch["encoder_cont"]


predictions, encoder_cont = main()
